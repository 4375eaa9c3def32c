-- The assistant's conversations, kept per user (contract §4 via issue 10): resumable from any browser.
CREATE TABLE "assistant_conversations" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"title" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "assistant_conversations_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "assistant_messages" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"tool_calls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "assistant_messages_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE INDEX "assistant_conversations_user_idx" ON "assistant_conversations" USING btree ("workspace_id","user_id","updated_at");--> statement-breakpoint
CREATE INDEX "assistant_messages_conversation_idx" ON "assistant_messages" USING btree ("workspace_id","conversation_id","id");--> statement-breakpoint
SELECT atrium_protect_tenant_table('assistant_conversations');
--> statement-breakpoint
SELECT atrium_protect_tenant_table('assistant_messages');
