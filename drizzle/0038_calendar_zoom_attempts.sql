-- The Zoom meeting made for a keyed calendar create, recorded before the calendar write: a retry of the same
-- create (same workspace, user, calendar and Idempotency-Key) meets in that meeting instead of making another,
-- and Atrium never takes a meeting id from an event's text (anyone who can write the calendar can put any
-- link there). Deleted when the visit is recorded; rows older than two days are cleared as new ones come.
CREATE TABLE "calendar_zoom_attempts" (
	"workspace_id" text NOT NULL,
	"client_key" text NOT NULL,
	"meeting_id" text NOT NULL,
	"join_url" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calendar_zoom_attempts_pk" PRIMARY KEY("workspace_id","client_key")
);
--> statement-breakpoint
SELECT atrium_protect_tenant_table('calendar_zoom_attempts');
