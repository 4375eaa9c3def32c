-- MRNs become unique per workspace (contract §3a, 409 mrn_taken). Existing duplicates cannot be
-- resolved silently (which record keeps the MRN is a clinical decision), so this migration stops
-- with a clear error if any exist; fix those records by hand, then start again.
DO $$
DECLARE dup record;
BEGIN
  SELECT workspace_id, mrn, count(*) AS n INTO dup FROM patients
    WHERE mrn IS NOT NULL GROUP BY workspace_id, mrn HAVING count(*) > 1 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'patients: % patients of workspace % share one MRN; give each a distinct MRN (or none) before upgrading', dup.n, dup.workspace_id;
  END IF;
END $$;--> statement-breakpoint
CREATE INDEX "audit_patient_idx" ON "audit_log" USING btree ("workspace_id",(data->>'patientId'),"id");--> statement-breakpoint
CREATE UNIQUE INDEX "patients_mrn_unique" ON "patients" USING btree ("workspace_id","mrn") WHERE mrn IS NOT NULL;
