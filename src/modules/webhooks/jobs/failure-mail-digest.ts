// The dead-letter e-mails held back within an hour after one (at most one per endpoint and admin per hour) are
// summed up in the next dead letter's e-mail; when none comes, this sweep mails the sum at the hour's end, so an
// endpoint that failed twenty times in an afternoon says so the same day, not at its next failure days later.
import { withSystem } from '../../../platform/db/tenant.js';
import { enqueueMail } from '../../../platform/mail/mailer.js';
import type { AppDeps } from '../../../platform/types.js';
import { adminEmails } from '../../identity/index.js';
import * as repo from '../repository.js';
import { FAILURE_MAIL_WINDOW_MS, heldFailureMail } from './failure-mail.js';

/** Recipients' rows taken per transaction: a few hundred e-mails at most, so no sweep holds locks for long. */
const DIGEST_BATCH = 200;

export interface DigestOptions {
  windowMs?: number;
  batchSize?: number;
}

/**
 * Mails every admin whose hour after an e-mail about an endpoint ended with dead letters held back, one e-mail per
 * endpoint (admins held back the same count since the same e-mail share one). An admin who is no longer an admin
 * of the workspace is dropped. The record of the send and the queued e-mails commit together. Answers how many
 * e-mails were queued.
 */
export async function sendHeldFailureMails(
  deps: Pick<AppDeps, 'db' | 'selfUrl'>,
  options: DigestOptions = {},
): Promise<number> {
  const windowMs = options.windowMs ?? FAILURE_MAIL_WINDOW_MS;
  const batchSize = options.batchSize ?? DIGEST_BATCH;
  let queued = 0;
  for (;;) {
    // System scope: a sweep across workspaces, like the job worker's claim; each mail names its workspace.
    const { rows, mails } = await withSystem(deps.db, async (tx) => {
      const rows = await repo.claimHeldFailureMails(tx, windowMs, batchSize);
      const groups = new Map<string, repo.HeldFailureMail[]>();
      for (const row of rows) {
        const key = JSON.stringify([row.workspaceId, row.endpointId, row.held, row.previousSentAt.toISOString()]);
        groups.set(key, [...(groups.get(key) ?? []), row]);
      }
      const admins = new Map<string, Set<string>>();
      let mails = 0;
      for (const group of groups.values()) {
        const { workspaceId, endpointId, held, previousSentAt } = group[0];
        if (!admins.has(workspaceId)) {
          const emails = await adminEmails(tx, workspaceId);
          admins.set(workspaceId, new Set(emails.map((e) => e.trim().toLowerCase())));
        }
        const to = group.map((r) => r.recipient).filter((r) => admins.get(workspaceId)?.has(r));
        if (to.length === 0) continue;
        const endpoint = await repo.findEndpoint(tx, workspaceId, endpointId);
        const link = `${deps.selfUrl()}/admin/webhooks/${encodeURIComponent(endpointId)}`;
        const mail = heldFailureMail({
          endpointId,
          url: endpoint?.url ?? null,
          description: endpoint?.description ?? null,
          link,
          previousSentAt,
          held,
          windowMs,
        });
        if (await enqueueMail(tx, workspaceId, { to, ...mail })) mails++;
      }
      return { rows: rows.length, mails };
    });
    queued += mails;
    if (rows < batchSize) return queued;
  }
}
