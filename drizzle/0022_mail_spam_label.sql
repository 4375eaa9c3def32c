-- Inbound mail (issue 12): the spam skill's label on a received message, when the skill is installed.
ALTER TABLE "mail_messages" ADD COLUMN "spam_label" text;--> statement-breakpoint
ALTER TABLE "mail_messages" ADD COLUMN "spam_probability" real;
