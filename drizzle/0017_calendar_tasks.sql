-- Tasks (contract §5.3): to-dos of the workspace, optionally linked to a calendar event.
CREATE TABLE "calendar_tasks" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"title" text NOT NULL,
	"event_id" text,
	"due_at" timestamp with time zone,
	"assignee_user_id" text,
	"done" boolean DEFAULT false NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calendar_tasks_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE INDEX "calendar_tasks_event_idx" ON "calendar_tasks" USING btree ("workspace_id","event_id");--> statement-breakpoint
CREATE INDEX "calendar_tasks_due_idx" ON "calendar_tasks" USING btree ("workspace_id","due_at");--> statement-breakpoint
SELECT atrium_protect_tenant_table('calendar_tasks');
