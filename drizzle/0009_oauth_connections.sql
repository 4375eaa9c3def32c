CREATE TABLE "oauth_connections" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"provider" text NOT NULL,
	"account_email" text NOT NULL,
	"user_id" text NOT NULL,
	"access_token_enc" text NOT NULL,
	"refresh_token_enc" text,
	"expires_at" timestamp with time zone,
	"status" text DEFAULT 'active' NOT NULL,
	"scopes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"token_version" integer DEFAULT 1 NOT NULL,
	"refresh_lease_until" timestamp with time zone,
	"refresh_holder" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_connections_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_connections_account_idx" ON "oauth_connections" USING btree ("workspace_id","provider","account_email");--> statement-breakpoint
CREATE INDEX "oauth_connections_user_idx" ON "oauth_connections" USING btree ("workspace_id","user_id");--> statement-breakpoint
-- A tenant table: RLS enabled and forced, tenant and system policies (see 0007).
SELECT atrium_protect_tenant_table('oauth_connections');
