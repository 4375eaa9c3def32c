-- Queued mail is retried for 3 days (151 attempts, backoff capped at 30 minutes; it gave up after 10, about
-- 85 minutes) and then dead-lettered. The mail queued before this release gets the same window (max_attempts
-- is stored per job when it is queued).
UPDATE "jobs" SET "max_attempts" = 151
 WHERE "type" = 'mail.send' AND "status" IN ('queued', 'running') AND "max_attempts" < 151;
