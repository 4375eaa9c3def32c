-- Whether an assistant turn was answered by the offline model (the emulators' deterministic model, labelled as such
-- in the web app). Only the answer of the request said so, so the label was gone once the conversation was reopened
-- or the page reloaded. Turns stored before are taken as answered by the configured model. Adding a column with a
-- constant default rewrites nothing; the ALTER waits at most 5 s for its lock.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "assistant_messages" ADD COLUMN IF NOT EXISTS "offline_model" boolean DEFAULT false NOT NULL;--> statement-breakpoint
SET LOCAL lock_timeout TO DEFAULT;
