-- Contract §7.1 delivery detail: what each attempt sent and got back. The request body is not
-- stored (it is the event, rebuilt from domain_events); the response body is cut at 4 KiB.
ALTER TABLE "webhook_attempts" ADD COLUMN "request_url" text;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD COLUMN "request_headers" jsonb;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD COLUMN "response_headers" jsonb;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD COLUMN "response_body" text;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD COLUMN "response_truncated" boolean DEFAULT false NOT NULL;
