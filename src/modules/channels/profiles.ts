// Contact names for channels whose webhooks carry none (Messenger, Instagram). After a message from a
// nameless contact is committed, one durable job per contact (deduplicated: a burst of messages makes one
// lookup) asks Graph with the connection's page token and stores the name if the contact still has none.
// A refusal leaves the name empty, ends the job at once and is not asked again for 30 days; an outage is
// retried with backoff. Names are never logged: reasons carry statuses and codes only.
import { and, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db/client.js';
import { queryRows, withTenant } from '../../platform/db/tenant.js';
import {
  type DeadJob,
  defineJob,
  insertJobsSql,
  JOBS_CHANNEL,
  PermanentJobError,
  RetryJobError,
} from '../../platform/jobs/index.js';
import { hasFeature } from '../../platform/tiers.js';
import { baseUrlOf, credentialsOf } from './credentials.js';
import { clean, clip, notifyConversations } from './inbound.js';
import { ADAPTERS, type ChannelName } from './providers/index.js';
import { channelConnections, channelContacts, channelConversations } from './tables.js';

/** Why a job ended without a name because the provider said no (onDead keeps the contact from being asked again). */
const REFUSED = 'refused: ';

export const contactProfileJob = defineJob({
  type: 'channels.contact-profile',
  schema: z.object({ contactId: z.string().min(1).max(100) }),
  // A Graph outage: asked again after 30 s, 1, 2, 4 and 8 minutes (each attempt itself retries a 5xx or a
  // timeout twice), then dead; the contact's next message queues a new lookup. A refusal is dead at once.
  maxAttempts: 6,
  backoff: { baseMs: 30_000, maxMs: 30 * 60_000 },
  leaseMs: 60_000,
  async handler(job, { contactId }) {
    const workspaceId = job.workspaceId;
    if (!workspaceId) throw new PermanentJobError('a contact lookup needs a workspace');
    // Read in the job's own workspace: a contact id of another workspace finds nothing, so it is never
    // looked up with this workspace's token (and its credentials would not open under this workspace).
    const [found] = await withTenant(job.deps.db, { workspaceId }, (tx) =>
      tx
        .select({ contact: channelContacts, connection: channelConnections })
        .from(channelContacts)
        .innerJoin(
          channelConnections,
          and(
            eq(channelConnections.workspaceId, channelContacts.workspaceId),
            eq(channelConnections.id, channelContacts.connectionId),
          ),
        )
        .where(
          and(
            eq(channelContacts.workspaceId, workspaceId),
            eq(channelContacts.id, contactId),
            isNull(channelConnections.deletedAt),
          ),
        ),
    );
    // Gone, disconnected, named meanwhile, or the workspace is no longer on a plan with channels.
    if (!found || found.contact.name !== null) return;
    if (!job.tier || !hasFeature(job.tier, 'inbound_channels')) return;
    const adapter = ADAPTERS[found.connection.channel as ChannelName];
    if (!adapter?.profile) return;
    const result = await adapter.profile(
      {
        baseUrl: baseUrlOf(job.deps, adapter),
        requestId: job.requestId,
        breakerKey: found.connection.id,
        signal: job.signal,
      },
      credentialsOf(job.deps, found.connection),
      found.contact.externalId,
    );
    if (result.outcome === 'unavailable') {
      if (result.retryAfterMs) throw new RetryJobError(result.reason, result.retryAfterMs);
      throw new Error(result.reason);
    }
    if (result.outcome === 'refused') throw new PermanentJobError(`${REFUSED}${result.reason}`);
    const name = result.name ? clip(clean(result.name), 200) : '';
    if (!name) throw new PermanentJobError(`${REFUSED}Graph answered without a name`);
    await withTenant(job.deps.db, { workspaceId }, async (tx) => {
      // Only a contact still without a name: one a later webhook or staff gave meanwhile is kept.
      const named = await tx
        .update(channelContacts)
        .set({ name })
        .where(
          and(
            eq(channelContacts.workspaceId, workspaceId),
            eq(channelContacts.id, contactId),
            isNull(channelContacts.name),
          ),
        )
        .returning({ id: channelContacts.id });
      if (named.length === 0) return;
      // The inbox's live update (`conversation.updated`): the list shows the name without a reload.
      const conversations = await tx
        .select({ id: channelConversations.id })
        .from(channelConversations)
        .where(and(eq(channelConversations.workspaceId, workspaceId), eq(channelConversations.contactId, contactId)));
      await notifyConversations(
        tx,
        workspaceId,
        conversations.map((c) => c.id),
      );
    });
  },
  onDead: markRefused,
});

/**
 * The lookup is dead. When the provider refused (not an outage that outlasted the retries), the contact is
 * not asked about again for 30 days however often they write. No inbox notice: the contact's id still shows.
 */
async function markRefused(tx: Tx, dead: DeadJob): Promise<void> {
  const contactId = (dead.payload as { contactId?: unknown } | null)?.contactId;
  if (!dead.workspaceId || typeof contactId !== 'string' || !dead.error.startsWith(REFUSED)) return;
  await tx
    .update(channelContacts)
    .set({ nameRefusedAt: sql`now()` })
    .where(
      and(
        eq(channelContacts.workspaceId, dead.workspaceId),
        eq(channelContacts.id, contactId),
        isNull(channelContacts.name),
      ),
    );
}

/**
 * Queues a lookup per contact in the storing transaction (so it exists only if the messages commit),
 * deduplicated per contact while one is queued or running; wakes the job workers on commit.
 */
export async function enqueueContactProfiles(tx: Tx, workspaceId: string, contactIds: string[]): Promise<number> {
  const ids = [...new Set(contactIds)];
  if (ids.length === 0) return 0;
  const rows = await queryRows<{ n: number }>(
    tx,
    sql`
    WITH added AS (${insertJobsSql(
      contactProfileJob,
      sql`SELECT ${workspaceId}::text, jsonb_build_object('contactId', id), 'contact:' || id, NULL::text
            FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) AS id`,
    )}
    ), woke AS (
      SELECT count(pg_notify(${JOBS_CHANNEL}, ${contactProfileJob.type})) AS w FROM (SELECT 1 FROM added LIMIT 1) one
    )
    SELECT (SELECT count(*)::int FROM added) AS n FROM woke`,
  );
  return rows[0]?.n ?? 0;
}
