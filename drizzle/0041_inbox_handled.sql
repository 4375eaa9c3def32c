-- Inbox items get a handled state: `open` until an admin replays the event (`replayed`, by POST
-- /admin/webhooks/:id/replay/:event_id) or dismisses the item (`resolved`, POST /inbox/:id/resolve), with when and
-- by whom. The page lists the open ones by default; GET /inbox without `state` still lists every item.
-- Instances of the previous release keep serving while this runs and write inbox items: the ALTERs wait at most
-- 5 s for their lock (else the start fails and is tried again) instead of queueing every later write behind them.
-- Adding a column with a constant default rewrites nothing.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "inbox_items" ADD COLUMN IF NOT EXISTS "state" text DEFAULT 'open' NOT NULL;--> statement-breakpoint
ALTER TABLE "inbox_items" ADD COLUMN IF NOT EXISTS "handled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "inbox_items" ADD COLUMN IF NOT EXISTS "handled_by" text;--> statement-breakpoint
-- Dead letters replayed before this release: an item whose delivery is no longer dead (a replay is the only way
-- back from dead), or that a later dead letter of the same event to the same endpoint followed, was replayed.
-- When and by whom was not recorded: handled_at is this upgrade, handled_by stays empty.
UPDATE "inbox_items" i
   SET "state" = 'replayed', "handled_at" = now()
 WHERE i.kind = 'webhook.dead_lettered' AND i.state = 'open'
   AND (EXISTS (SELECT 1 FROM "webhook_deliveries" d
                 WHERE d.workspace_id = i.workspace_id AND d.endpoint_id = i.endpoint_id AND d.event_id = i.event_id
                   AND d.state IN ('pending', 'delivered'))
        OR EXISTS (SELECT 1 FROM "inbox_items" later
                    WHERE later.workspace_id = i.workspace_id AND later.kind = i.kind
                      AND later.endpoint_id = i.endpoint_id AND later.event_id = i.event_id AND later.id > i.id));--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "inbox_items_open_idx" ON "inbox_items" USING btree ("workspace_id","id") WHERE state = 'open';
