import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import { preparedRows } from '../db/tenant.js';
import { newId } from '../ids.js';
import type { EventType } from './event-types.js';

export { EVENT_TYPES, type EventType } from './event-types.js';

export interface DomainEvent {
  id: string;
  workspaceId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Runs inside the publishing transaction (e.g. webhook fan-out writes its delivery rows there), once
 * per publish with every event of it (one workspace).
 */
export type EventFanout = (tx: Tx, events: DomainEvent[]) => Promise<void>;

const fanouts: EventFanout[] = [];

export function registerEventFanout(fanout: EventFanout): void {
  if (!fanouts.includes(fanout)) fanouts.push(fanout);
}

export const EVENTS_CHANNEL = 'atrium_events';

/**
 * Writes a domain event into the outbox in the caller's transaction: a committed change always
 * has its event and a rolled-back one never does. NOTIFY is transactional too, so listeners
 * wake only after commit.
 */
export async function publishEvent(
  tx: Tx,
  scope: { workspaceId: string },
  type: EventType,
  data: Record<string, unknown>,
): Promise<DomainEvent> {
  const [event] = await publishEvents(tx, scope, type, [data]);
  return event;
}

/**
 * Several events of one type in one go (group commit): one insert, one fan-out and one NOTIFY
 * statement whatever their number.
 */
export async function publishEvents(
  tx: Tx,
  scope: { workspaceId: string },
  type: EventType,
  data: Record<string, unknown>[],
): Promise<DomainEvent[]> {
  if (data.length === 0) return [];
  const createdAt = new Date();
  const events: DomainEvent[] = data.map((d) => ({
    id: newId('evt'),
    workspaceId: scope.workspaceId,
    type,
    data: d,
    createdAt,
  }));
  // The rows and their NOTIFY in one statement (listeners wake only after commit either way).
  const rows = JSON.stringify(events.map((e) => ({ id: e.id, data: e.data })));
  await preparedRows(
    tx,
    sql`
    WITH e AS (
      INSERT INTO domain_events (workspace_id, id, type, data, created_at)
      SELECT ${scope.workspaceId}, id, ${type}, data, ${createdAt.toISOString()}::timestamptz
        FROM jsonb_to_recordset(${rows}::jsonb) AS x(id text, data jsonb)
      RETURNING id
    )
    SELECT pg_notify(${EVENTS_CHANNEL}, id) FROM e`,
  );
  for (const fanout of fanouts) await fanout(tx, events);
  return events;
}
