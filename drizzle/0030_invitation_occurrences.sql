-- iMIP for series as they stand: what guests were last told about the series itself, and per occurrence
-- (by original start) whether it was cancelled, how it was moved or changed, and guests' replies to it alone.
ALTER TABLE "calendar_invitations" ADD COLUMN "series" jsonb;--> statement-breakpoint
ALTER TABLE "calendar_invitations" ADD COLUMN "occurrences" jsonb DEFAULT '{}'::jsonb NOT NULL;
