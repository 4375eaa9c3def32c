-- Direct-message search index: updated in place on every insert (fastupdate off) instead of through
-- GIN's pending list. With the list on, the insert that finds it full merges it into the index, a
-- pause of tens of milliseconds for that one sender (bench:messages at 1,000,000 messages: p99 at
-- 500 sends/s 52 ms with the list, 39 ms without). The entries already pending are merged now.
ALTER INDEX "dm_messages_search_idx" SET (fastupdate = off);--> statement-breakpoint
SELECT gin_clean_pending_list('dm_messages_search_idx'::regclass);
