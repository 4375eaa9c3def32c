-- A dead-lettered webhook event e-mailed every admin, each time: an endpoint that went down for an afternoon sent
-- one e-mail per event. Now each admin gets at most one such e-mail per endpoint per hour, the next one saying how
-- many more failed since. The time of the last e-mail (and the count held back) is kept here, so the window holds
-- across restarts and instances. Rows of a deleted endpoint go with it.
CREATE TABLE "webhook_failure_mails" (
	"workspace_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"recipient" text NOT NULL,
	"last_sent_at" timestamp with time zone,
	"held" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "webhook_failure_mails_workspace_id_endpoint_id_recipient_pk" PRIMARY KEY("workspace_id","endpoint_id","recipient")
);
--> statement-breakpoint
SELECT atrium_protect_tenant_table('webhook_failure_mails');
