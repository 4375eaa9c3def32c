-- Health monitoring (issue 14): probe results and incidents. Platform data: no workspace, no RLS.
CREATE TABLE "service_health_checks" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"component" text NOT NULL,
	"measurement" text NOT NULL,
	"status" text NOT NULL,
	"observed_value" text NOT NULL,
	"observed_unit" text NOT NULL,
	"output" text,
	"checked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "health_incidents" (
	"id" text PRIMARY KEY NOT NULL,
	"component" text NOT NULL,
	"status" text NOT NULL,
	"summary" text NOT NULL,
	"opened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "service_health_checks_probe_idx" ON "service_health_checks" USING btree ("component","measurement","checked_at");--> statement-breakpoint
CREATE INDEX "service_health_checks_time_idx" ON "service_health_checks" USING btree ("checked_at");--> statement-breakpoint
CREATE INDEX "health_incidents_component_idx" ON "health_incidents" USING btree ("component","status");--> statement-breakpoint
CREATE UNIQUE INDEX "health_incidents_one_open_idx" ON "health_incidents" ("component") WHERE "status" = 'open';
