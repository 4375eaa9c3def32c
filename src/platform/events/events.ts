import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import { newId } from '../ids.js';
import { domainEvents } from '../platform-tables.js';
import type { EventType } from './event-types.js';

export { EVENT_TYPES, type EventType } from './event-types.js';

export interface DomainEvent {
  id: string;
  workspaceId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** Runs inside the publishing transaction (e.g. webhook fan-out writes its delivery rows there). */
export type EventFanout = (tx: Tx, event: DomainEvent) => Promise<void>;

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
  const event: DomainEvent = { id: newId('evt'), workspaceId: scope.workspaceId, type, data, createdAt: new Date() };
  await tx.insert(domainEvents).values(event);
  for (const fanout of fanouts) await fanout(tx, event);
  await tx.execute(sql`SELECT pg_notify(${EVENTS_CHANNEL}, ${event.id})`);
  return event;
}
