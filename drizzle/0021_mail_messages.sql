-- Inbound mail (issue 12): messages received at a workspace's inbound address.
CREATE TABLE "mail_messages" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"from" text NOT NULL,
	"to" text[] NOT NULL,
	"subject" text NOT NULL,
	"text" text NOT NULL,
	"calendar_method" text,
	"size_bytes" integer NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mail_messages_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE INDEX "mail_messages_received_idx" ON "mail_messages" USING btree ("workspace_id","received_at");--> statement-breakpoint
SELECT atrium_protect_tenant_table('mail_messages');
