// A keyed create whose server was killed during its provider call (contract §1 Idempotency-Key): the retry with
// the same key, once the claim is stale, runs the create again and answers the one event, made once at the
// provider, with its appointment saved once. The kill is the provider call never returning (the process stops
// there and never goes on), before or after the provider made the event; the minute a restart takes is the claim
// made older, as platform/idempotency.test.ts does.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { decodeEventId } from './ids.js';
import { googleCalendar } from './providers/google.js';
import { microsoftCalendar } from './providers/microsoft.js';
import type { CalendarProvider, ProviderEvent } from './providers/types.js';

let t: TestApp;
let ws: TestWorkspace;
let patient: { id: string };
const calendars: Record<string, string> = {};
const adapters: Record<string, CalendarProvider> = { google: googleCalendar, microsoft: microsoftCalendar };

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  for (const provider of ['google', 'microsoft'] as const)
    calendars[provider] = (
      await connectCalendar(t, ws.admin.token, provider, `crash-${ws.id}@${provider}.example`)
    ).calendarId;
  patient = await createPatient(t, ws.admin.token, { givenName: 'Cass', familyName: 'Crash' });
}, 60_000);
afterAll(async () => {
  vi.restoreAllMocks();
  await t?.close();
});

const create = (calendar: string, draft: Record<string, unknown>, key: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/calendar/events',
    token: ws.admin.token,
    headers: { 'idempotency-key': key },
    payload: { calendar, draft },
  });

const claimState = async (key: string) =>
  (
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ state: string }>(
        tx,
        sql`SELECT state FROM idempotency_keys WHERE workspace_id = ${ws.id} AND key = ${key}`,
      ),
    )
  )[0]?.state;

/** The restart took over a minute: the dead request's claim is stale. */
const restartLater = (key: string) =>
  withSystem(t.app.atrium.db, (tx) =>
    tx.execute(
      sql`UPDATE idempotency_keys SET created_at = now() - interval '10 minutes'
           WHERE workspace_id = ${ws.id} AND key = ${key}`,
    ),
  );

const createdEvents = async (workspaceId: string, eventId: string) =>
  (
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ data: { eventId: string } }>(
        tx,
        sql`SELECT data FROM domain_events WHERE workspace_id = ${workspaceId} AND type = 'appointment.created'`,
      ),
    )
  ).filter((e) => e.data.eventId === eventId).length;

const listed = async (calendar: string, day: string, query = '') => {
  const res = await t.request({
    method: 'GET',
    url: `/api/v1/calendar/events?calendar=${calendar}&timeMin=${day}T00:00:00Z&timeMax=${day}T23:59:59Z${query}`,
    token: ws.admin.token,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as { id: string; title: string; patientId: string | null }[];
};

/**
 * The server stops inside the provider's insert: before sending it (`made: false`), or after the provider made
 * the event (`made: true`). The stopped call never returns, as in a killed process; the spy is gone after it.
 */
function killDuringInsert(provider: string, made: boolean) {
  const adapter = adapters[provider];
  const real = adapter.insertEvent.bind(adapter);
  const state: { reached: boolean; event?: ProviderEvent } = { reached: false };
  const spy = vi.spyOn(adapter, 'insertEvent').mockImplementationOnce(async (...args) => {
    state.reached = true;
    if (made) state.event = await real(...args);
    return new Promise<ProviderEvent>(() => undefined);
  });
  return { state, restore: () => spy.mockRestore() };
}

describe.each(['google', 'microsoft'])('%s: a keyed create killed during its provider call', (provider) => {
  it.each([
    ['before the provider made the event', false],
    ['after the provider made the event, before the appointment was saved', true],
  ])('%s: the same-key retry makes it once, with its appointment', async (_, made) => {
    // A day of its own: the patient's other visits are not this one's conflicts.
    const day = `2026-12-${provider === 'google' ? 0 : 1}${made ? 8 : 7}`;
    const key = `crash-${provider}-${made}`;
    const title = `Crash probe ${provider} ${made}`;
    const draft = { title, start: `${day}T15:00:00Z`, end: `${day}T15:30:00Z`, patientId: patient.id };
    const kill = killDuringInsert(provider, made);
    void create(calendars[provider], draft, key);
    await expect.poll(() => (made ? kill.state.event !== undefined : kill.state.reached)).toBe(true);
    kill.restore();
    // Only the token step's audit row was written before the call: nothing of the create's outcome.
    expect(await claimState(key)).toBe('pending');
    await restartLater(key);

    const retry = await create(calendars[provider], draft, key);
    expect(retry.statusCode, retry.body).toBe(201);
    const { eventId } = retry.json();
    if (kill.state.event) expect(decodeEventId(eventId).providerEventId).toBe(kill.state.event.providerEventId);
    // One event at the provider, the appointment's, found by its patient; appointment.created once.
    expect((await listed(calendars[provider], day)).filter((e) => e.title === title).map((e) => e.id)).toEqual([
      eventId,
    ]);
    expect((await listed(calendars[provider], day, `&patientId=${patient.id}`)).map((e) => e.id)).toEqual([eventId]);
    expect(await createdEvents(ws.id, eventId)).toBe(1);
    // And it is answered from then on as made.
    const again = await create(calendars[provider], draft, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().eventId).toBe(eventId);
  });
});
