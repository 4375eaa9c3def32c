-- Calendar (issue 11): provider calendars per connection, Atrium's own facts about provider events
-- (patient, host, completed, Zoom meeting), and the calendar emulators' per-account state.
CREATE TABLE "calendar_calendars" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"connection_id" text NOT NULL,
	"provider" text NOT NULL,
	"provider_calendar_id" text NOT NULL,
	"name" text NOT NULL,
	"account_email" text NOT NULL,
	"primary" boolean DEFAULT false NOT NULL,
	"color" text,
	"host_user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calendar_calendars_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "calendar_calendars_provider_idx" ON "calendar_calendars" USING btree ("workspace_id","connection_id","provider_calendar_id");--> statement-breakpoint
CREATE TABLE "calendar_appointments" (
	"workspace_id" text NOT NULL,
	"calendar_id" text NOT NULL,
	"provider_event_id" text NOT NULL,
	"patient_id" text,
	"host_user_id" text,
	"status" text DEFAULT 'confirmed' NOT NULL,
	"zoom_meeting_id" text,
	"zoom_join_url" text,
	"start_at" timestamp with time zone,
	"end_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calendar_appointments_workspace_id_calendar_id_provider_event_id_pk" PRIMARY KEY("workspace_id","calendar_id","provider_event_id")
);
--> statement-breakpoint
CREATE INDEX "calendar_appointments_patient_idx" ON "calendar_appointments" USING btree ("workspace_id","patient_id","start_at");--> statement-breakpoint
CREATE TABLE "emulator_state" (
	"emulator" text NOT NULL,
	"key" text NOT NULL,
	"data" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "emulator_state_emulator_key_pk" PRIMARY KEY("emulator","key")
);
--> statement-breakpoint
SELECT atrium_protect_tenant_table('calendar_calendars');
--> statement-breakpoint
SELECT atrium_protect_tenant_table('calendar_appointments');
