-- The public status page's 90 days of daily uptime (contract §9) came from the raw probe results, which the hourly
-- sweep deletes after ATRIUM_HEALTH_TTL (default 30 days): the page had 30 days, and every anonymous call
-- aggregated up to 90 days of checks (1.2-1.6 s at 3.2 M rows). A small rollup per probe and UTC day, added to by
-- each recorded run and kept 90 days whatever the TTL. Platform data like service_health_checks: no workspace, no
-- RLS. Filled once here from the checks still kept (the same figures the page showed for those days).
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "health_daily" (
	"component" text NOT NULL,
	"measurement" text NOT NULL,
	"day" date NOT NULL,
	"runs" integer DEFAULT 0 NOT NULL,
	"passing" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "health_daily_pkey" PRIMARY KEY ("component", "measurement", "day")
);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "health_daily_day_idx" ON "health_daily" USING btree ("day");--> statement-breakpoint
INSERT INTO "health_daily" ("component", "measurement", "day", "runs", "passing")
SELECT "component", "measurement", ("checked_at" AT TIME ZONE 'UTC')::date, count(*)::int,
       count(*) FILTER (WHERE "status" <> 'fail')::int
  FROM "service_health_checks"
 WHERE "checked_at" >= now() - interval '92 days'
 GROUP BY 1, 2, 3
    ON CONFLICT DO NOTHING;--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
