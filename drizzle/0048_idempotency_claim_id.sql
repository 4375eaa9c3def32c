-- Which claim of an Idempotency-Key a row is: set when a request claims the key and anew when a retry takes over a
-- stale claim. Freeing a key, recording its answer and marking it committed were matched by the key alone, so a
-- freeing tried again after its acknowledgement was lost (or a request whose stale claim was taken over) deleted or
-- overwrote the claim of a later request with the same key, and a third one ran while that one still did. Rows
-- claimed before this migration have none: they are only ever taken over (after a minute) or expire. Adding a
-- nullable column rewrites nothing; the ALTER waits at most 5 s for its lock.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN IF NOT EXISTS "claim_id" text;--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
