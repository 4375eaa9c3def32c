-- The audit trail is append-only: no role, not even the table owner, may change or delete a row.
CREATE OR REPLACE FUNCTION atrium_refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION atrium_refuse_audit_change();
