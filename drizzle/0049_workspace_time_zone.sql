-- The clinic's time zone (an IANA name such as America/New_York), set by the workspace's admins: the web app shows
-- and takes calendar times in it, whatever zone each person's device is on. Null: not chosen, each device shows its
-- own zone (what every workspace did before). Adding a nullable column rewrites nothing; the ALTER waits at most
-- 5 s for its lock.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN IF NOT EXISTS "time_zone" text;--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
