-- Sessions booked from authorized units (issue 12): one row per session, units counted under a lock.
CREATE TABLE "calendar_sessions" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"authorization_id" text NOT NULL,
	"patient_id" text NOT NULL,
	"calendar_id" text NOT NULL,
	"series_event_id" text,
	"start_at" timestamp with time zone NOT NULL,
	"end_at" timestamp with time zone NOT NULL,
	"units" integer NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calendar_sessions_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE INDEX "calendar_sessions_authorization_idx" ON "calendar_sessions" USING btree ("workspace_id","authorization_id");--> statement-breakpoint
CREATE INDEX "calendar_sessions_series_idx" ON "calendar_sessions" USING btree ("workspace_id","calendar_id","series_event_id");--> statement-breakpoint
SELECT atrium_protect_tenant_table('calendar_sessions');
