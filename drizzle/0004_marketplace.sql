CREATE TABLE "private_skills" (
	"workspace_id" text NOT NULL,
	"slug" text NOT NULL,
	"skill_id" text NOT NULL,
	"version" text NOT NULL,
	"manifest" jsonb NOT NULL,
	"content" text NOT NULL,
	"endpoint" text NOT NULL,
	"secret_encrypted" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "private_skills_workspace_id_slug_pk" PRIMARY KEY("workspace_id","slug")
);
--> statement-breakpoint
CREATE TABLE "skill_installs" (
	"workspace_id" text NOT NULL,
	"slug" text NOT NULL,
	"skill_id" text NOT NULL,
	"version" text NOT NULL,
	"manifest" jsonb NOT NULL,
	"granted_scopes" jsonb NOT NULL,
	"status" text NOT NULL,
	"installed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"installed_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"uninstalled_at" timestamp with time zone,
	"uninstalled_by" text,
	CONSTRAINT "skill_installs_workspace_id_slug_pk" PRIMARY KEY("workspace_id","slug")
);
--> statement-breakpoint
CREATE TABLE "patient_coverages" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"patient_id" text NOT NULL,
	"payer_id" text NOT NULL,
	"payer_name" text NOT NULL,
	"member_id" text NOT NULL,
	"group_number" text,
	"plan_name" text,
	"effective_from" date NOT NULL,
	"effective_to" date,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	CONSTRAINT "patient_coverages_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE INDEX "skill_installs_status_idx" ON "skill_installs" USING btree ("workspace_id","status");--> statement-breakpoint
CREATE INDEX "patient_coverages_patient_idx" ON "patient_coverages" USING btree ("workspace_id","patient_id");