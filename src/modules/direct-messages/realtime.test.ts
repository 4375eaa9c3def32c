import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  addMember,
  createPatient,
  createWorkspace,
  type TestUser,
  type TestWorkspace,
} from '../../../test/helpers/factories.js';
import { auditRows, openSse, type SseClient, sendDm } from './test-support.js';

let t: TestApp;
let ws: TestWorkspace;
let bob: TestUser;
let carol: TestUser;
const streams: SseClient[] = [];

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  bob = await addMember(t, ws, { name: 'Bob' });
  carol = await addMember(t, ws, { name: 'Carol' });
});
// Streams stay open on purpose: closing the app must end them rather than hang.
afterAll(async () => {
  await t?.close();
  for (const s of streams) s.close();
});

const open = async (baseUrl: string, threadId: string, token: string, headers?: Record<string, string>) => {
  const s = await openSse(baseUrl, `/api/v1/direct-messages/${threadId}/events`, token, headers);
  streams.push(s);
  return s;
};
const messages = (s: SseClient) => s.events.filter((e) => e.event === 'message.created');

describe('thread events (SSE)', () => {
  it('streams new messages and receipts to a participant, never to others', async () => {
    const { threadId } = (await sendDm(t, ws.admin.token, { recipients: [bob.userId], body: 'first' })).json();
    const stream = await open(t.baseUrl, threadId, bob.token);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toContain('text/event-stream');
    expect(stream.cacheControl).toContain('no-store');
    // Every connection starts with the receipts snapshot.
    await stream.waitFor((ev) => ev.filter((e) => e.event === 'receipt.updated').length === 2);

    const outsider = await open(t.baseUrl, threadId, carol.token);
    expect(outsider.status).toBe(404);

    const sent = (await sendDm(t, ws.admin.token, { threadId, body: 'live one' })).json().message;
    await stream.waitFor((ev) => ev.some((e) => e.event === 'message.created'));
    const [event] = messages(stream);
    expect(event.id).toBe(sent.id);
    expect(JSON.parse(event.data)).toEqual(sent);

    const read = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${threadId}`,
      token: bob.token,
      payload: { read: true },
    });
    expect(read.statusCode).toBe(200);
    await stream.waitFor((ev) =>
      ev.some((e) => e.event === 'receipt.updated' && JSON.parse(e.data).lastReadMessageId === sent.id),
    );
    const receipt = stream.events.filter((e) => e.event === 'receipt.updated').at(-1)!;
    expect(receipt.id).toBeUndefined();
    expect(JSON.parse(receipt.data)).toMatchObject({ userId: bob.userId, lastReadMessageId: sent.id });
  });

  it('delivers a burst in order exactly once and resumes after Last-Event-ID', async () => {
    const { threadId, message: first } = (
      await sendDm(t, ws.admin.token, { recipients: [bob.userId, carol.userId], body: 'g0' })
    ).json();
    const stream = await open(t.baseUrl, threadId, carol.token);
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        sendDm(t, i % 2 ? bob.token : ws.admin.token, { threadId, body: `burst ${i}` }),
      ),
    );
    expect(burst.every((r) => r.statusCode === 201)).toBe(true);
    await stream.waitFor((ev) => ev.filter((e) => e.event === 'message.created').length === 10);
    const history = (
      await t.request({ method: 'GET', url: `/api/v1/direct-messages/${threadId}?limit=50`, token: carol.token })
    ).json().items as { id: string }[];
    // Stream order equals history order (oldest → newest), without duplicates.
    expect(messages(stream).map((e) => e.id)).toEqual(
      history
        .slice(0, 10)
        .map((m) => m.id)
        .reverse(),
    );
    const seenUpTo = messages(stream)[3].id!;
    stream.close();

    // Reconnect with Last-Event-ID: the six messages after it arrive, then live ones.
    const resumed = await open(t.baseUrl, threadId, carol.token, { 'last-event-id': seenUpTo });
    await resumed.waitFor((ev) => ev.filter((e) => e.event === 'message.created').length === 6);
    expect(messages(resumed).map((e) => e.id)).toEqual(
      messages(stream)
        .slice(4)
        .map((e) => e.id),
    );
    const live = (await sendDm(t, bob.token, { threadId, body: 'after resume' })).json().message;
    await resumed.waitFor((ev) => ev.some((e) => e.id === live.id));
    expect(messages(resumed).map((e) => e.id)).not.toContain(first.id);
  });

  it('audits PHI shown through the stream like a read', async () => {
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Live', familyName: 'Patient' });
    const { threadId } = (await sendDm(t, ws.admin.token, { recipients: [carol.userId], body: 'hello' })).json();
    const stream = await open(t.baseUrl, threadId, carol.token);
    await stream.waitFor((ev) => ev.some((e) => e.event === 'receipt.updated'));
    const sent = (await sendDm(t, ws.admin.token, { threadId, body: `check @patient:${patient.id}` })).json().message;
    await stream.waitFor((ev) => ev.some((e) => e.id === sent.id));
    const rows = (await auditRows(t, ws.admin.token, 'phi_access')).filter(
      (r) => r.threadId === threadId && r.actorUserId === carol.userId,
    );
    expect(rows).toMatchObject([{ patientId: patient.id, access: 'read', messageId: sent.id }]);
  });

  // Two app instances on one PostgreSQL server: NOTIFY carries the ids from instance 1 to a subscriber on instance 2.
  it.skipIf(!process.env.ATRIUM_TEST_DATABASE_URL)('fans out across instances with LISTEN/NOTIFY', async () => {
    const second = await t.startInstance();
    const { threadId } = (await sendDm(t, ws.admin.token, { recipients: [bob.userId], body: 'cross 0' })).json();
    const stream = await open(second.baseUrl, threadId, bob.token);
    expect(stream.status).toBe(200);
    await stream.waitFor((ev) => ev.some((e) => e.event === 'receipt.updated'));

    const sent = await fetch(`${t.baseUrl}/api/v1/direct-messages/${threadId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.admin.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'sent through instance 1' }),
    });
    expect(sent.status).toBe(201);
    const { message } = (await sent.json()) as { message: { id: string } };
    await stream.waitFor((ev) => ev.some((e) => e.event === 'message.created' && e.id === message.id));
    expect(JSON.parse(messages(stream)[0].data).body).toBe('sent through instance 1');

    await fetch(`${t.baseUrl}/api/v1/direct-messages/${threadId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ws.admin.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ read: true }),
    });
    // The admin's own send already moved their receipt; Bob's read on instance 1 reaches instance 2 too.
    await fetch(`${t.baseUrl}/api/v1/direct-messages/${threadId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ read: true }),
    });
    await stream.waitFor((ev) =>
      ev.some(
        (e) =>
          e.event === 'receipt.updated' &&
          JSON.parse(e.data).userId === bob.userId &&
          JSON.parse(e.data).lastReadMessageId === message.id,
      ),
    );
  });
});
