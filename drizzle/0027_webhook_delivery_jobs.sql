-- Webhook delivery moves onto platform/jobs (issue 9): type webhooks.deliver, one job per pending
-- delivery, keyed by endpoint. Jobs may now be cancelled (a replay, a deleted endpoint).
DROP INDEX IF EXISTS "jobs_finished_idx";--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" USING btree ("updated_at") WHERE status IN ('done', 'dead', 'cancelled');--> statement-breakpoint
-- Keyless due jobs per type; keyed ones are found per key (jobs_key_due_idx), so a long keyed backlog
-- never stands in the way of another type's claim.
DROP INDEX IF EXISTS "jobs_due_idx";--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("type", "run_at") WHERE status = 'queued' AND concurrency_key IS NULL;--> statement-breakpoint
INSERT INTO "jobs" ("id", "type", "workspace_id", "payload", "max_attempts", "run_at", "dedupe_key", "concurrency_key", "created_at")
SELECT 'job_' || replace(gen_random_uuid()::text, '-', ''), 'webhooks.deliver', "workspace_id",
       jsonb_build_object('endpointId', "endpoint_id", 'eventId', "event_id"), 50, "next_attempt_at",
       "endpoint_id" || ':' || "event_id", "endpoint_id", "created_at"
  FROM "webhook_deliveries" WHERE "state" = 'pending';--> statement-breakpoint
DROP INDEX IF EXISTS "webhook_deliveries_due_pending_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "webhook_deliveries_next_pending_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "webhook_deliveries_leased_idx";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "locked_until";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "lease_token";
