-- Telehealth rooms (issue 12): one pre-warmed video room per calendar event with conferencing.
CREATE TABLE "telehealth_rooms" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"event_id" text NOT NULL,
	"provider_room_id" text,
	"join_url" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "telehealth_rooms_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "telehealth_rooms_event_idx" ON "telehealth_rooms" USING btree ("workspace_id","event_id");--> statement-breakpoint
CREATE INDEX "telehealth_rooms_status_idx" ON "telehealth_rooms" USING btree ("workspace_id","status");--> statement-breakpoint
SELECT atrium_protect_tenant_table('telehealth_rooms');
