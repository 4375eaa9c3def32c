-- Finding patients by the words of their name (direct-message search names a patient by name: "vance" finds the
-- messages mentioning Eleanor Vance) read every patient of the workspace: the words were compared with `&&` on an
-- array built from each row's name, which no index serves. The search is now `@@` against this expression, which
-- the GIN index below serves; the same English configuration, so the same words match. Built without blocking
-- writes would need CONCURRENTLY, which cannot run in the migration's transaction; the ALTER waits at most 5 s for
-- its lock (else the start fails and is tried again) instead of queueing every later patient write behind it.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "patients_name_words_idx" ON "patients" USING gin (to_tsvector('english'::regconfig, "given_name" || ' ' || "family_name")) WITH (fastupdate = off);--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
