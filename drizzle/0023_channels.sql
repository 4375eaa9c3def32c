-- Inbound messaging channels (issue 13): connections, contacts, conversations, messages.
CREATE TABLE "channel_connections" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"channel" text NOT NULL,
	"name" text NOT NULL,
	"credentials_enc" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "channel_connections_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "channel_contacts" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"connection_id" text NOT NULL,
	"channel" text NOT NULL,
	"external_id" text NOT NULL,
	"name" text,
	"phone" text,
	"patient_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_contacts_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "channel_conversations" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"connection_id" text NOT NULL,
	"channel" text NOT NULL,
	"contact_id" text NOT NULL,
	"last_message_text" text,
	"last_message_at" timestamp with time zone,
	"unread_count" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_conversations_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "channel_messages" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"channel" text NOT NULL,
	"direction" text NOT NULL,
	"provider_message_id" text,
	"dedup_key" text,
	"text" text NOT NULL,
	"attachments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" text NOT NULL,
	"error" text,
	"sent_by" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_messages_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "channel_contacts_external_idx" ON "channel_contacts" USING btree ("workspace_id","connection_id","external_id");--> statement-breakpoint
CREATE INDEX "channel_contacts_patient_idx" ON "channel_contacts" USING btree ("workspace_id","patient_id");--> statement-breakpoint
CREATE UNIQUE INDEX "channel_conversations_contact_idx" ON "channel_conversations" USING btree ("workspace_id","contact_id");--> statement-breakpoint
CREATE INDEX "channel_conversations_updated_idx" ON "channel_conversations" USING btree ("workspace_id","updated_at");--> statement-breakpoint
CREATE UNIQUE INDEX "channel_messages_dedup_idx" ON "channel_messages" USING btree ("workspace_id","connection_id","dedup_key");--> statement-breakpoint
CREATE INDEX "channel_messages_conversation_idx" ON "channel_messages" USING btree ("workspace_id","conversation_id","at");--> statement-breakpoint
CREATE INDEX "channel_messages_provider_idx" ON "channel_messages" USING btree ("workspace_id","connection_id","provider_message_id");--> statement-breakpoint
SELECT atrium_protect_tenant_table('channel_connections');--> statement-breakpoint
SELECT atrium_protect_tenant_table('channel_contacts');--> statement-breakpoint
SELECT atrium_protect_tenant_table('channel_conversations');--> statement-breakpoint
SELECT atrium_protect_tenant_table('channel_messages');
