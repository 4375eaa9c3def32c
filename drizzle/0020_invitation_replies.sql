-- iMIP REPLYs received by mail (issue 12): each guest's answer, by address.
ALTER TABLE "calendar_invitations" ADD COLUMN "replies" jsonb DEFAULT '{}'::jsonb NOT NULL;
