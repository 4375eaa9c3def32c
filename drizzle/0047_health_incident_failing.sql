-- The measurements that failed while a health incident was open (or opened it). An incident closes when none of its
-- component's measurements has failed for 2 runs, and each of these has passed (not merely warned) for 2 runs
-- (contract §9: "closes it when all of them pass 2 consecutive runs"); a sibling that only ever warned (ai:fallback
-- with a single provider) does not hold it open. Incidents open before this migration start with an empty list:
-- they close as before it (no failure for 2 runs). Adding a column with a constant default rewrites nothing.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "health_incidents" ADD COLUMN IF NOT EXISTS "failing" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
