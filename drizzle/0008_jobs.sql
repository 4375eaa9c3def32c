CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"workspace_id" text,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"run_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_until" timestamp with time zone,
	"claimed_by" text,
	"last_error" text,
	"dedupe_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Mail moves onto platform/jobs (type mail.send): mail still waiting to be sent is carried over.
INSERT INTO "jobs" ("id", "type", "workspace_id", "payload", "attempts", "max_attempts", "run_at", "last_error", "created_at")
SELECT 'job_' || substr("id", 6), 'mail.send', "workspace_id",
       jsonb_strip_nulls(jsonb_build_object('to', "to", 'subject', "subject", 'text', "text", 'html', "html", 'attachments', "attachments")),
       least("attempts", 9), 10, "next_attempt_at", "last_error", "created_at"
  FROM "mail_outbox" WHERE "status" = 'pending';--> statement-breakpoint
DROP TABLE "mail_outbox" CASCADE;--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("run_at") WHERE status = 'queued';--> statement-breakpoint
CREATE INDEX "jobs_lease_idx" ON "jobs" USING btree ("lease_until") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" USING btree ("updated_at") WHERE status IN ('done', 'dead');--> statement-breakpoint
CREATE INDEX "jobs_workspace_idx" ON "jobs" USING btree ("workspace_id","type");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_dedupe_idx" ON "jobs" USING btree (coalesce(workspace_id, ''),"type","dedupe_key") WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running');--> statement-breakpoint
-- A tenant table (workspace_id): RLS enabled and forced, tenant and system policies (see 0007).
SELECT atrium_protect_tenant_table('jobs');
