-- Indexes for the lists a busy clinic reads every day, found by growing a workspace to two years of data
-- (20,000 patients, 200 members with 100,000 sign-ins, 100,000 audit rows, 30,000 inbox messages):
-- each of these was a whole-table scan that grew with the history.
-- The members list's last sign-in (max(created_at) of a member's sessions): one index probe per member.
CREATE INDEX "sessions_user_created_idx" ON "sessions" USING btree ("workspace_id","user_id","created_at");--> statement-breakpoint
-- The audit log filtered by person, and by date range, newest first.
CREATE INDEX "audit_actor_idx" ON "audit_log" USING btree ("workspace_id","actor_user_id","id");--> statement-breakpoint
CREATE INDEX "audit_at_idx" ON "audit_log" USING btree ("workspace_id","at","id");--> statement-breakpoint
-- The inbox's messages across conversations, newest first (one channel's too, read along it: one index, not
-- two, on the table every inbound message is written to).
CREATE INDEX "channel_messages_at_idx" ON "channel_messages" USING btree ("workspace_id","at","id");--> statement-breakpoint
-- The unread conversations (badge and list): only those with something unread.
CREATE INDEX "channel_conversations_unread_idx" ON "channel_conversations" USING btree ("workspace_id","updated_at","id") WHERE "unread_count" > 0;
