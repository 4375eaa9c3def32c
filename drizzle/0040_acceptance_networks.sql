-- Refused inbound calls name the client networks they came from (hashes, no addresses): an acceptance
-- probe fails only when refusals came from enough networks, so one machine sending forged signatures
-- cannot open an incident, raise banners or turn the public status page (platform/acceptance.ts).
-- Rows written before (and by instances of the previous release) have none: they count towards the rate,
-- not towards the networks.
SET LOCAL lock_timeout = '5s';
--> statement-breakpoint
ALTER TABLE "inbound_acceptance" ADD COLUMN IF NOT EXISTS "refused_from" text[] DEFAULT '{}'::text[] NOT NULL;
