-- Direct-message search no longer matches the text of a patient mention. A mention is stored in the body as
-- `@patient:<id>`, and the search vector was built from the raw body, so searching "patient" found every message
-- with a mention and "pat" or a patient id found messages by the id. The vector is now built from the body with
-- each mention token replaced by the stop word "the" (the pattern of src/modules/direct-messages/mentions.ts): it is
-- not indexed but keeps a gap in the word positions, so the phrase "call back" does not match "call @x back"; the search
-- finds a mentioned patient by name instead, through the `mentions` column (the new GIN index below serves its
-- `?|` and `@>`; updated in place, as the search index is since 0028, so no send pays for merging a pending list).
-- A generated column's expression cannot be changed before PostgreSQL 17: the column is dropped (its index with
-- it) and added again, which recomputes it for every message and rewrites the table; sends wait for that. The
-- ALTER waits at most 5 s for its lock (else the start fails and is tried again) instead of queueing every
-- later send behind it.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "dm_messages" DROP COLUMN "search";--> statement-breakpoint
ALTER TABLE "dm_messages" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, regexp_replace(body, '@patient:[A-Za-z0-9_-]{1,100}', ' the ', 'g'))) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "dm_messages_search_idx" ON "dm_messages" USING gin ("search") WITH (fastupdate = off);--> statement-breakpoint
CREATE INDEX "dm_messages_mentions_idx" ON "dm_messages" USING gin ("mentions") WITH (fastupdate = off);--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
