-- Delivery reports that overtake the send's answer (Meta, Viber): kept an hour, applied when the reply's
-- provider id is stored (docs/channels.md, "Statuses").
CREATE TABLE "channel_pending_statuses" (
	"workspace_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"provider_message_id" text NOT NULL,
	"status" text NOT NULL,
	"error" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_pending_statuses_pk" PRIMARY KEY("workspace_id","connection_id","provider_message_id","status")
);
--> statement-breakpoint
CREATE INDEX "channel_pending_statuses_received_idx" ON "channel_pending_statuses" USING btree ("received_at");--> statement-breakpoint
SELECT atrium_protect_tenant_table('channel_pending_statuses');
