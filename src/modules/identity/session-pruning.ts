// Sessions that ended (expired or revoked) are deleted after SESSION_RETENTION_MS, so the table holds about a
// month of sign-ins rather than every sign-in ever made. A schedule queues the durable job once an hour; the
// job deletes in small batches, each its own short transaction, so it never holds many rows or a lock for long.
import { z } from 'zod';
import { withSystem } from '../../platform/db/tenant.js';
import { defineJob, enqueueJob } from '../../platform/jobs/jobs.js';
import type { AppDeps } from '../../platform/types.js';
import * as repo from './repository.js';

/**
 * How long an ended session is kept: a month to answer "was this session live then?" (support, a suspected
 * account takeover) next to the audit log. The members list's last sign-in is on the membership, not here.
 */
export const SESSION_RETENTION_MS = 30 * 24 * 3600_000;
/** Rows per transaction: small enough that each delete holds its locks for milliseconds. */
export const SESSION_PRUNE_BATCH = 1000;
const DEDUPE_KEY = 'identity.prune-sessions';

export interface PruneOptions {
  now?: Date;
  retentionMs?: number;
  batchSize?: number;
  /** Stops between batches (the job's claim was lost; the next run continues). */
  signal?: AbortSignal;
}

/** Deletes every session that ended more than the retention ago, batch by batch; answers how many and in how many batches. */
export async function pruneEndedSessions(
  deps: Pick<AppDeps, 'db'>,
  options: PruneOptions = {},
): Promise<{ deleted: number; batches: number }> {
  const endedBefore = new Date((options.now ?? new Date()).getTime() - (options.retentionMs ?? SESSION_RETENTION_MS));
  const batchSize = options.batchSize ?? SESSION_PRUNE_BATCH;
  let deleted = 0;
  let batches = 0;
  while (!options.signal?.aborted) {
    // System scope: a sweep across workspaces, like the job worker's claim.
    const n = await withSystem(deps.db, (tx) => repo.pruneEndedSessions(tx, endedBefore, batchSize));
    batches++;
    deleted += n;
    if (n < batchSize) break;
  }
  return { deleted, batches };
}

export const pruneSessionsJob = defineJob({
  type: 'identity.prune-sessions',
  schema: z.object({}),
  maxAttempts: 3,
  async handler(ctx) {
    const { deleted, batches } = await pruneEndedSessions(ctx.deps, { signal: ctx.signal });
    if (deleted > 0) ctx.log.info({ deleted, batches }, 'pruned ended sessions');
  },
});

/** Queues a pruning run (the hourly schedule); nothing when one is still queued or running. */
export async function queueSessionPruning(deps: Pick<AppDeps, 'db'>): Promise<void> {
  // System scope: a platform job (no workspace) over every workspace's sessions.
  await withSystem(deps.db, (tx) => enqueueJob(tx, pruneSessionsJob, {}, { workspaceId: null, dedupeKey: DEDUPE_KEY }));
}
