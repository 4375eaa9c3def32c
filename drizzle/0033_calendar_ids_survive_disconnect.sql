-- A calendar's id is stable for (workspace, provider, account, provider calendar id): disconnecting a
-- connection marks its calendars `disconnected_at` instead of deleting them (appointments, sessions and
-- telehealth rooms point at the id), and connecting the same account again attaches the same rows to the
-- new connection. Rows whose connection is already gone are marked now; of two rows for one calendar (a
-- sync that finished after a disconnect), the connected one is kept, else the oldest.
ALTER TABLE "calendar_calendars" ADD COLUMN "disconnected_at" timestamp with time zone;--> statement-breakpoint
UPDATE "calendar_calendars" c SET "disconnected_at" = now()
 WHERE NOT EXISTS (SELECT 1 FROM "oauth_connections" o WHERE o."workspace_id" = c."workspace_id" AND o."id" = c."connection_id");--> statement-breakpoint
DELETE FROM "calendar_calendars" c
 USING "calendar_calendars" k
 WHERE k."workspace_id" = c."workspace_id" AND k."provider" = c."provider" AND k."account_email" = c."account_email"
   AND k."provider_calendar_id" = c."provider_calendar_id" AND k."id" <> c."id"
   AND (k."disconnected_at" IS NULL, c."created_at", c."id") > (c."disconnected_at" IS NULL, k."created_at", k."id");--> statement-breakpoint
-- calendar_calendars_provider_idx (workspace, connection, provider calendar) stays: instances of the previous
-- release, still running during a rolling deploy, store calendars with ON CONFLICT on it. The new index implies
-- it (a connection is one account), and it serves the reads by connection.
CREATE UNIQUE INDEX "calendar_calendars_account_idx" ON "calendar_calendars" USING btree ("workspace_id","provider","account_email","provider_calendar_id");
