-- Health monitoring (issue 14): inbound acceptance counts flushed by every instance. Platform data.
CREATE TABLE "inbound_acceptance" (
	"id" text PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"accepted" integer NOT NULL,
	"refused" integer NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "inbound_acceptance_source_idx" ON "inbound_acceptance" USING btree ("source","at");
