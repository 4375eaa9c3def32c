CREATE TABLE "dm_messages" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"thread_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"sender_id" text NOT NULL,
	"body" text NOT NULL,
	"mentions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, body)) STORED NOT NULL,
	CONSTRAINT "dm_messages_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "dm_participants" (
	"workspace_id" text NOT NULL,
	"thread_id" text NOT NULL,
	"user_id" text NOT NULL,
	"joined_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_read_seq" bigint DEFAULT 0 NOT NULL,
	"last_read_message_id" text,
	"read_at" timestamp with time zone,
	CONSTRAINT "dm_participants_workspace_id_thread_id_user_id_pk" PRIMARY KEY("workspace_id","thread_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "dm_phi_reads" (
	"workspace_id" text NOT NULL,
	"thread_id" text NOT NULL,
	"user_id" text NOT NULL,
	"patient_id" text NOT NULL,
	"logged_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dm_phi_reads_workspace_id_thread_id_user_id_patient_id_pk" PRIMARY KEY("workspace_id","thread_id","user_id","patient_id")
);
--> statement-breakpoint
CREATE TABLE "dm_threads" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"kind" text NOT NULL,
	"title" text,
	"member_key" text NOT NULL,
	"created_by" text NOT NULL,
	"last_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dm_threads_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "dm_messages_thread_seq_idx" ON "dm_messages" USING btree ("workspace_id","thread_id","seq");--> statement-breakpoint
CREATE INDEX "dm_messages_search_idx" ON "dm_messages" USING gin ("search");--> statement-breakpoint
CREATE INDEX "dm_participants_user_idx" ON "dm_participants" USING btree ("workspace_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "dm_threads_member_key_idx" ON "dm_threads" USING btree ("workspace_id","member_key");