-- Payments (issue 14's payments probes): checkout sessions asked of patients.
CREATE TABLE "payments" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"patient_id" text,
	"description" text NOT NULL,
	"amount_cents" integer NOT NULL,
	"currency" text NOT NULL,
	"provider_session_id" text NOT NULL,
	"checkout_url" text NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"paid_at" timestamp with time zone,
	CONSTRAINT "payments_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "payments_session_idx" ON "payments" USING btree ("provider_session_id");--> statement-breakpoint
CREATE INDEX "payments_patient_idx" ON "payments" USING btree ("workspace_id","patient_id");--> statement-breakpoint
SELECT atrium_protect_tenant_table('payments');
