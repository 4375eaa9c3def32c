ALTER TABLE "jobs" ADD COLUMN "concurrency_key" text;--> statement-breakpoint
CREATE INDEX "jobs_key_due_idx" ON "jobs" USING btree ("type","concurrency_key","run_at") WHERE status = 'queued' AND concurrency_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX "jobs_key_running_idx" ON "jobs" USING btree ("type","concurrency_key") WHERE status = 'running' AND concurrency_key IS NOT NULL;