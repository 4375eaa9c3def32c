-- A telehealth room that cannot be made is retried until the visit no longer needs it, then marked
-- `failed` with the reason (it used to stay `pending` for good once its pre-warm job died). `needed_until`
-- is when the visit is over (null: a week after it was asked for); the partial index serves the sweep that
-- re-queues pending rooms whose job is gone.
ALTER TABLE "telehealth_rooms" ADD COLUMN "needed_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "telehealth_rooms" ADD COLUMN "failure_reason" text;--> statement-breakpoint
CREATE INDEX "telehealth_rooms_pending_idx" ON "telehealth_rooms" USING btree ("created_at") WHERE "status" = 'pending';
