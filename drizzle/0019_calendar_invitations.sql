-- iMIP invitations (issue 12): stable UID, SEQUENCE and invited addresses per event.
CREATE TABLE "calendar_invitations" (
	"workspace_id" text NOT NULL,
	"uid" text NOT NULL,
	"event_id" text NOT NULL,
	"sequence" integer DEFAULT 0 NOT NULL,
	"attendees" text[] NOT NULL,
	"cancelled" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calendar_invitations_workspace_id_uid_pk" PRIMARY KEY("workspace_id","uid")
);
--> statement-breakpoint
CREATE INDEX "calendar_invitations_event_idx" ON "calendar_invitations" USING btree ("workspace_id","event_id");--> statement-breakpoint
SELECT atrium_protect_tenant_table('calendar_invitations');
