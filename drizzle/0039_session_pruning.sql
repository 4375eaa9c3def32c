-- Sessions are pruned: the `identity.prune-sessions` job deletes a session 30 days after it ended (expired or
-- was revoked), so the table holds about a month of sign-ins instead of every sign-in ever made.
--
-- A member's last sign-in to a workspace (GET /members `lastSignInAt`) was read as the newest of their
-- sessions there; it is kept on the membership now, so pruning does not lose it. Backfilled here with the
-- value the list showed until now (read along sessions_user_created_idx).
-- Instances of the previous release keep serving while this runs, and every authenticated request may read
-- memberships: the ALTER must not queue behind a long query (every later read would queue behind it). It waits
-- at most 5 s for its lock, else the start fails and is tried again, instead of stalling the running instances.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "last_sign_in_at" timestamp with time zone;--> statement-breakpoint
UPDATE "memberships" m
   SET "last_sign_in_at" = s.last
  FROM (SELECT workspace_id, user_id, max(created_at) AS last FROM "sessions" GROUP BY workspace_id, user_id) s
 WHERE m.workspace_id = s.workspace_id AND m.user_id = s.user_id;--> statement-breakpoint
-- Kept by the database, whoever opens the session (this release, an instance of the previous release still
-- serving during a rolling deploy, a seed): a new session sets its membership's time, and a session moved to
-- another of the user's workspaces (POST /auth/switch-workspace) sets that membership's to the time of the
-- move. Runs with the writer's role: its transaction is scoped to the session's workspace (row-level
-- security), which is the membership's. `greatest` ignores a NULL and never moves the time back.
CREATE FUNCTION atrium_note_sign_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memberships
     SET last_sign_in_at = greatest(last_sign_in_at, CASE WHEN TG_OP = 'INSERT' THEN NEW.created_at ELSE now() END)
   WHERE workspace_id = NEW.workspace_id AND user_id = NEW.user_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER sessions_note_sign_in AFTER INSERT ON sessions
  FOR EACH ROW EXECUTE FUNCTION atrium_note_sign_in();--> statement-breakpoint
CREATE TRIGGER sessions_note_switch AFTER UPDATE OF workspace_id ON sessions
  FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) EXECUTE FUNCTION atrium_note_sign_in();--> statement-breakpoint
-- The pruning job's batches find ended sessions through this index (a session's end is the earlier of its
-- expiry and its revocation; least() skips a NULL revoked_at), not by scanning the table. Building it holds
-- sign-ins and sign-outs (writes to sessions, not reads) for one pass over the table.
CREATE INDEX "sessions_ended_idx" ON "sessions" USING btree ((least("expires_at", "revoked_at")));--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
