import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  addMember,
  createPatient,
  createWorkspace,
  setTier,
  type TestUser,
  type TestWorkspace,
} from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { auditRows, sendDm } from './test-support.js';

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;
let admin: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  other = await createWorkspace(t, { tier: 'standard' });
  admin = ws.admin;
  bob = await addMember(t, ws, { name: 'Bob Baker' });
  carol = await addMember(t, ws, { name: 'Carol Chen' });
  dave = await addMember(t, ws, { name: 'Dave Diaz' });
});
afterAll(async () => t?.close());

const list = async (token: string) => {
  const res = await t.request({ method: 'GET', url: '/api/v1/direct-messages', token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as {
    id: string;
    kind: string;
    title: string;
    unreadCount: number;
    lastMessage: { id: string } | null;
    participants: { userId: string }[];
  }[];
};
const history = async (token: string, threadId: string, query = '') =>
  t.request({ method: 'GET', url: `/api/v1/direct-messages/${threadId}${query}`, token });
const threadCount = async () => (await list(admin.token)).length;

describe('threads', () => {
  it('reuses the 1:1 thread of a pair in both directions', async () => {
    const first = await sendDm(t, admin.token, { recipients: [bob.userId], body: 'Hello Bob' });
    expect(first.statusCode, first.body).toBe(201);
    const { threadId, message } = first.json();
    expect(threadId).toMatch(/^thr_/);
    expect(message).toMatchObject({ threadId, senderId: admin.userId, body: 'Hello Bob', mentions: [] });
    expect(message.id).toMatch(/^msg_/);

    const back = await sendDm(t, bob.token, { recipients: [admin.userId], body: 'Hi!' });
    expect(back.statusCode).toBe(201);
    expect(back.json().threadId).toBe(threadId);

    // Duplicates and the sender in the list are ignored: still the same pair.
    const dup = await sendDm(t, admin.token, { recipients: [bob.userId, bob.userId, admin.userId], body: 'again' });
    expect(dup.statusCode).toBe(201);
    expect(dup.json().threadId).toBe(threadId);

    const thread = (await list(admin.token)).find((x) => x.id === threadId)!;
    expect(thread.kind).toBe('direct');
    expect(thread.title).toBe('Bob Baker');
    expect(thread.lastMessage?.id).toBe(dup.json().message.id);
  });

  it('reuses a group thread for exactly the same member set', async () => {
    const g1 = await sendDm(t, admin.token, { recipients: [bob.userId, carol.userId], body: 'team', title: 'Ward 3' });
    expect(g1.statusCode, g1.body).toBe(201);
    const g2 = await sendDm(t, carol.token, { recipients: [admin.userId, bob.userId], body: 'yes' });
    expect(g2.json().threadId).toBe(g1.json().threadId);
    const g3 = await sendDm(t, admin.token, { recipients: [bob.userId, carol.userId, dave.userId], body: 'bigger' });
    expect(g3.json().threadId).not.toBe(g1.json().threadId);

    const items = await list(bob.token);
    const group = items.find((x) => x.id === g1.json().threadId)!;
    expect(group.kind).toBe('group');
    expect(group.title).toBe('Ward 3');
    expect(group.participants.map((p) => p.userId).sort()).toEqual([admin.userId, bob.userId, carol.userId].sort());
    // Dave is not part of the first group.
    expect((await list(dave.token)).map((x) => x.id)).not.toContain(g1.json().threadId);
  });

  it('sends into a thread by id (both forms)', async () => {
    const { threadId } = (await sendDm(t, admin.token, { recipients: [carol.userId], body: 'start' })).json();
    const viaBody = await sendDm(t, carol.token, { threadId, body: 'reply 1' });
    expect(viaBody.statusCode).toBe(201);
    expect(viaBody.json().threadId).toBe(threadId);
    const viaPath = await t.request({
      method: 'POST',
      url: `/api/v1/direct-messages/${threadId}`,
      token: carol.token,
      payload: { body: 'reply 2' },
    });
    expect(viaPath.statusCode, viaPath.body).toBe(201);
    expect(viaPath.json().message.threadId).toBe(threadId);
  });
});

describe('validation: bad bodies store nothing', () => {
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['empty body', { body: '' }, 400, 'validation_failed'],
    ['whitespace body', { body: '   \n ' }, 400, 'validation_failed'],
    ['10,001 characters', { body: 'x'.repeat(10_001) }, 400, 'validation_failed'],
    ['non-string body', { body: 42 }, 400, 'validation_failed'],
    ['missing body', { body: undefined }, 400, 'validation_failed'],
    ['no recipients and no thread', { recipients: undefined }, 400, 'validation_failed'],
    ['both recipients and thread', { threadId: 'thr_x' }, 400, 'validation_failed'],
    ['empty recipients', { recipients: [] }, 400, 'validation_failed'],
    ['non-string recipient', { recipients: [7] }, 400, 'validation_failed'],
    ['unknown recipient', { recipients: ['usr_doesnotexist'] }, 422, 'unknown_recipient'],
    ['self-only recipients', { recipients: ['SELF'] }, 422, 'unprocessable'],
  ];
  for (const [name, patch, status, code] of cases) {
    it(name, async () => {
      const before = await threadCount();
      const sends = (await auditRows(t, admin.token, 'message_send')).length;
      const payload: Record<string, unknown> = { recipients: [bob.userId], body: 'ok', ...patch };
      if (Array.isArray(payload.recipients)) {
        payload.recipients = (payload.recipients as unknown[]).map((r) => (r === 'SELF' ? admin.userId : r));
      }
      for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
      const res = await sendDm(t, admin.token, payload);
      expect(res.statusCode, res.body).toBe(status);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe(code);
      expect(await threadCount()).toBe(before);
      expect((await auditRows(t, admin.token, 'message_send')).length).toBe(sends);
    });
  }

  it('refuses a member of another workspace as recipient', async () => {
    const res = await sendDm(t, admin.token, { recipients: [bob.userId, other.admin.userId], body: 'hi' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'unknown_recipient', recipients: [other.admin.userId] });
  });

  it('accepts exactly 10,000 characters (counted as code points)', async () => {
    const res = await sendDm(t, admin.token, { recipients: [dave.userId], body: '😀'.repeat(10_000) });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
  });

  it('refuses an unknown field and a bad read body', async () => {
    const res = await sendDm(t, admin.token, { recipients: [bob.userId], body: 'x', extra: 1 });
    expect(res.statusCode).toBe(400);
  });
});

describe('participants only', () => {
  it('answers 404 to a workspace member outside the thread', async () => {
    const { threadId } = (await sendDm(t, admin.token, { recipients: [bob.userId], body: 'private' })).json();
    const asDave = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      t.request({ method, url, payload, token: dave.token });
    for (const res of [
      await asDave('GET', `/api/v1/direct-messages/${threadId}`),
      await asDave('POST', `/api/v1/direct-messages/${threadId}`, { body: 'intrude' }),
      await asDave('PATCH', `/api/v1/direct-messages/${threadId}`, { read: true }),
      await asDave('GET', `/api/v1/direct-messages/${threadId}/events`),
      await sendDm(t, dave.token, { threadId, body: 'intrude' }),
      await asDave('GET', '/api/v1/direct-messages/thr_unknown'),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().code).toBe('not_found');
      expect(res.body).not.toContain('private');
    }
    const bodies = (await history(admin.token, threadId)).json().items.map((m: { body: string }) => m.body);
    expect(bodies[0]).toBe('private');
    expect(bodies).not.toContain('intrude');
  });
});

describe('history pagination', () => {
  it('pages newest first without skips or repeats, also under concurrent sends', async () => {
    const { threadId } = (await sendDm(t, bob.token, { recipients: [carol.userId, dave.userId], body: 'm0' })).json();
    const sent = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        t.request({
          method: 'POST',
          url: `/api/v1/direct-messages/${threadId}`,
          token: i % 2 ? carol.token : dave.token,
          payload: { body: `m${i + 1}` },
        }),
      ),
    );
    expect(sent.every((r) => r.statusCode === 201)).toBe(true);

    // Page while more messages keep arriving: they are newer than every cursor, so never seen twice.
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const res = await history(carol.token, threadId, `?limit=4${cursor ? `&before=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      seen.push(...body.items.map((m: { id: string }) => m.id));
      cursor = body.nextCursor;
      if (round++ < 3) {
        await t.request({
          method: 'POST',
          url: `/api/v1/direct-messages/${threadId}`,
          token: bob.token,
          payload: { body: `late ${round}` },
        });
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    const expected = [sent.map((r) => r.json().message.id)].flat();
    for (const id of expected) expect(seen).toContain(id);
    expect(seen).toHaveLength(25);

    // Full history now holds everything in a strict order by send.
    const all = (await history(carol.token, threadId, '?limit=200')).json().items as {
      id: string;
      createdAt: string;
    }[];
    expect(all).toHaveLength(28);
    expect(new Set(all.map((m) => m.id)).size).toBe(28);

    // A message id works as `before` too.
    const older = (await history(carol.token, threadId, `?limit=2&before=${all[1].id}`)).json();
    expect(older.items.map((m: { id: string }) => m.id)).toEqual([all[2].id, all[3].id]);
  });

  it('pages the thread list whole when threads were active within one millisecond; a forged cursor is a 400', async () => {
    const { withSystem } = await import('../../platform/db/tenant.js');
    const { sql } = await import('drizzle-orm');
    const team = await createWorkspace(t, { tier: 'standard' });
    const members = [await addMember(t, team, { name: 'Erin' }), await addMember(t, team, { name: 'Finn' })];
    for (const m of members) await sendDm(t, team.admin.token, { recipients: [m.userId], body: 'hi' });
    await sendDm(t, team.admin.token, { recipients: members.map((m) => m.userId), body: 'all' });
    // Three threads whose last activity differs only in microseconds.
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(sql`
        UPDATE dm_threads d SET updated_at = '2026-11-26T10:00:00.123Z'::timestamptz + (n || ' microseconds')::interval
          FROM (SELECT id, row_number() OVER (ORDER BY id) * 100 AS n FROM dm_threads WHERE workspace_id = ${team.id}) x
         WHERE d.workspace_id = ${team.id} AND d.id = x.id`),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.request({
        method: 'GET',
        url: `/api/v1/direct-messages?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        token: team.admin.token,
      });
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...res.json().items.map((x: { id: string }) => x.id));
      cursor = res.json().nextCursor;
    } while (cursor && seen.length < 10);
    expect(new Set(seen).size).toBe(3);
    for (const forged of [{ u: 'not a time', id: 'x' }, ['2026-02-30T00:00:00.000000Z', 'x']]) {
      const res = await t.request({
        method: 'GET',
        url: `/api/v1/direct-messages?cursor=${Buffer.from(JSON.stringify(forged)).toString('base64url')}`,
        token: team.admin.token,
      });
      expect(res.statusCode, JSON.stringify(forged)).toBe(400);
    }
  });

  it('rejects a malformed cursor', async () => {
    const { threadId } = (await sendDm(t, admin.token, { recipients: [bob.userId], body: 'x' })).json();
    expect((await history(admin.token, threadId, '?before=%%%')).statusCode).toBe(400);
    expect((await history(admin.token, threadId, '?limit=0')).statusCode).toBe(400);
  });
});

describe('read receipts', () => {
  it('counts unread per caller, marks read, and never moves back', async () => {
    const m1 = (await sendDm(t, carol.token, { recipients: [dave.userId], body: 'one' })).json();
    const threadId = m1.threadId;
    await sendDm(t, carol.token, { threadId, body: 'two' });
    const m3 = (await sendDm(t, carol.token, { threadId, body: 'three' })).json();

    const unread = async (token: string) => (await list(token)).find((x) => x.id === threadId)!.unreadCount;
    expect(await unread(dave.token)).toBe(3);
    expect(await unread(carol.token)).toBe(0);

    const partial = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${threadId}`,
      token: dave.token,
      payload: { read: true, lastReadMessageId: m1.message.id },
    });
    expect(partial.statusCode, partial.body).toBe(200);
    expect(partial.json().receipt).toMatchObject({ userId: dave.userId, lastReadMessageId: m1.message.id });
    expect(await unread(dave.token)).toBe(2);

    const all = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${threadId}`,
      token: dave.token,
      payload: { read: true },
    });
    expect(all.json().receipt.lastReadMessageId).toBe(m3.message.id);
    expect(await unread(dave.token)).toBe(0);

    // An older id leaves the receipt where it is.
    const back = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${threadId}`,
      token: dave.token,
      payload: { read: true, lastReadMessageId: m1.message.id },
    });
    expect(back.statusCode).toBe(200);
    expect(back.json().receipt.lastReadMessageId).toBe(m3.message.id);

    const receipts = (await history(carol.token, threadId)).json().receipts as {
      userId: string;
      lastReadMessageId: string;
    }[];
    expect(receipts.find((r) => r.userId === dave.userId)?.lastReadMessageId).toBe(m3.message.id);
  });

  it('refuses a message of another thread and a non-true read flag', async () => {
    const a = (await sendDm(t, carol.token, { recipients: [bob.userId], body: 'a' })).json();
    const b = (await sendDm(t, carol.token, { recipients: [admin.userId], body: 'b' })).json();
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${a.threadId}`,
      token: bob.token,
      payload: { read: true, lastReadMessageId: b.message.id },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('unknown_message');
    const falsy = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${a.threadId}`,
      token: bob.token,
      payload: { read: false },
    });
    expect(falsy.statusCode).toBe(400);
  });
});

describe('Free tier is receive-only', () => {
  it('reads and marks read but refuses to send', async () => {
    const free = await createWorkspace(t, { tier: 'standard' });
    const peer = await addMember(t, free);
    const { threadId } = (
      await sendDm(t, free.admin.token, { recipients: [peer.userId], body: 'before downgrade' })
    ).json();
    await setTier(t, free.id, 'free');

    for (const res of [
      await sendDm(t, peer.token, { threadId, body: 'no' }),
      await sendDm(t, peer.token, { recipients: [free.admin.userId], body: 'no' }),
      await t.request({
        method: 'POST',
        url: `/api/v1/direct-messages/${threadId}`,
        token: peer.token,
        payload: { body: 'no' },
      }),
    ]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({
        code: 'tier_required',
        feature: 'direct_messages_send',
        requiredTier: 'standard',
      });
    }
    expect((await history(peer.token, threadId)).json().items).toHaveLength(1);
    const read = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${threadId}`,
      token: peer.token,
      payload: { read: true },
    });
    expect(read.statusCode).toBe(200);
    expect((await list(peer.token))[0].unreadCount).toBe(0);
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response and creates nothing more', async () => {
    const key = `dm-${Date.now()}`;
    const payload = { recipients: [dave.userId], body: 'idempotent hello' };
    const first = await sendDm(t, bob.token, payload, { 'idempotency-key': key });
    const again = await sendDm(t, bob.token, payload, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json().message.id).toBe(first.json().message.id);
    const items = (await history(bob.token, first.json().threadId, '?limit=200')).json().items as { body: string }[];
    expect(items.filter((m) => m.body === 'idempotent hello')).toHaveLength(1);

    const reused = await sendDm(t, bob.token, { ...payload, body: 'different' }, { 'idempotency-key': key });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('idempotency_key_reused');

    const path = `/api/v1/direct-messages/${first.json().threadId}`;
    const p1 = await t.request({
      method: 'POST',
      url: path,
      token: bob.token,
      payload: { body: 'p' },
      headers: { 'idempotency-key': key },
    });
    const p2 = await t.request({
      method: 'POST',
      url: path,
      token: bob.token,
      payload: { body: 'p' },
      headers: { 'idempotency-key': key },
    });
    expect(p2.json().message.id).toBe(p1.json().message.id);
  });
});

describe('@patient mentions and PHI audit', () => {
  it('refuses unknown and other-workspace patients and stores nothing', async () => {
    const foreign = await createPatient(t, other.admin.token);
    const before = await threadCount();
    const phi = (await auditRows(t, admin.token, 'phi_access')).length;
    for (const body of [`see @patient:pat_nope`, `see @patient:${foreign.id}`]) {
      const res = await sendDm(t, admin.token, { recipients: [carol.userId, dave.userId, bob.userId], body });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().code).toBe('unknown_patient');
      expect(res.body).not.toContain(`${foreign.givenName} ${foreign.familyName}`);
    }
    expect(await threadCount()).toBe(before);
    expect((await auditRows(t, admin.token, 'phi_access')).length).toBe(phi);
  });

  it('answers 404 before judging mentions when the caller is not in the thread', async () => {
    const created = await sendDm(t, admin.token, { recipients: [bob.userId], body: 'just us' });
    expect(created.statusCode, created.body).toBe(201);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/direct-messages/${created.json().threadId}`,
      token: carol.token,
      payload: { body: 'see @patient:pat_nope' },
    });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('audits each mentioned patient on send, and reads at most once per reader, thread and patient per hour', async () => {
    const p1 = await createPatient(t, admin.token, { givenName: 'Grace', familyName: 'Hopper' });
    const p2 = await createPatient(t, admin.token, { givenName: 'Alan', familyName: 'Turing' });
    const sent = await sendDm(t, bob.token, {
      recipients: [admin.userId],
      body: `Please review @patient:${p1.id} and @patient:${p2.id} (again @patient:${p1.id})`,
    });
    expect(sent.statusCode, sent.body).toBe(201);
    const { threadId, message } = sent.json();
    expect(message.mentions).toEqual([
      { type: 'patient', patientId: p1.id, displayName: 'Grace Hopper' },
      { type: 'patient', patientId: p2.id, displayName: 'Alan Turing' },
    ]);

    const sends = await auditRows(t, admin.token, 'message_send');
    expect(sends.find((r) => r.messageId === message.id)).toMatchObject({
      module: 'direct-messages',
      threadId,
      actorUserId: bob.userId,
    });
    const phiFor = async () => (await auditRows(t, admin.token, 'phi_access')).filter((r) => r.threadId === threadId);
    const onSend = await phiFor();
    expect(onSend).toHaveLength(2);
    expect(onSend.map((r) => r.patientId).sort()).toEqual([p1.id, p2.id].sort());
    expect(onSend.every((r) => r.actorUserId === bob.userId && r.context === 'direct-messages')).toBe(true);

    // The admin opens the thread: one read row per patient; opening again within the hour adds none.
    expect((await history(admin.token, threadId)).statusCode).toBe(200);
    const afterRead = await phiFor();
    const reads = afterRead.filter((r) => r.actorUserId === admin.userId);
    expect(reads).toHaveLength(2);
    expect(reads.every((r) => r.access === 'read' && r.messageId === message.id)).toBe(true);
    await history(admin.token, threadId);
    await list(admin.token);
    expect(await phiFor()).toHaveLength(4);
  });
});

describe('search', () => {
  it('is for admins only, stemmed, ranked, snippet-highlighted, filtered and audited', async () => {
    const { threadId } = (
      await sendDm(t, carol.token, {
        recipients: [dave.userId],
        body: 'The patient was running a fever > 39 & rising <b>overnight</b>',
      })
    ).json();
    await sendDm(t, bob.token, { recipients: [dave.userId], body: 'Fever fever fever — runs high again' });
    await sendDm(t, bob.token, { recipients: [carol.userId], body: 'Lunch at noon?' });

    const member = await t.request({ method: 'GET', url: '/api/v1/direct-messages/search?q=fever', token: dave.token });
    expect(member.statusCode).toBe(403);
    expect(member.json().code).toBe('forbidden');

    const res = await t.request({
      method: 'GET',
      url: '/api/v1/direct-messages/search?q=runs%20fevers',
      token: admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as {
      message: { body: string; threadId: string };
      snippet: string;
      rank: number;
      thread: { id: string };
    }[];
    expect(items).toHaveLength(2);
    // Denser match ranks first.
    expect(items[0].message.body).toContain('Fever fever fever');
    expect(items[0].rank).toBeGreaterThanOrEqual(items[1].rank);
    const hit = items.find((i) => i.thread.id === threadId)!;
    expect(hit.snippet).toContain('<mark>running</mark>');
    // Text is HTML-escaped around the marks (ts_headline itself drops tag-like tokens).
    expect(hit.snippet).toContain('&gt; 39 &amp; rising');
    expect(hit.snippet).not.toContain('<b>');

    const byUser = await t.request({
      method: 'GET',
      url: `/api/v1/direct-messages/search?q=fever&userId=${carol.userId}`,
      token: admin.token,
    });
    expect(byUser.json().items.map((i: { thread: { id: string } }) => i.thread.id)).toEqual([threadId]);
    const bySender = await t.request({
      method: 'GET',
      url: `/api/v1/direct-messages/search?q=fever&senderId=${bob.userId}`,
      token: admin.token,
    });
    expect(bySender.json().items).toHaveLength(1);

    const paged = await t.request({
      method: 'GET',
      url: '/api/v1/direct-messages/search?q=fever&limit=1',
      token: admin.token,
    });
    const next = await t.request({
      method: 'GET',
      url: `/api/v1/direct-messages/search?q=fever&limit=1&cursor=${paged.json().nextCursor}`,
      token: admin.token,
    });
    expect(next.json().items[0].message.id).not.toBe(paged.json().items[0].message.id);

    const audits = (await auditRows(t, admin.token, 'admin_action')).filter(
      (r) => r.action === 'direct_messages.search',
    );
    expect(audits.length).toBeGreaterThanOrEqual(5);
    expect(audits.some((r) => r.query === 'runs fevers' && r.resultCount === 2)).toBe(true);

    const empty = await t.request({ method: 'GET', url: '/api/v1/direct-messages/search?q=', token: admin.token });
    expect(empty.statusCode).toBe(400);
    const stop = await t.request({ method: 'GET', url: '/api/v1/direct-messages/search?q=the', token: admin.token });
    expect(stop.json().items).toEqual([]);
  });

  it("reads a mention as the patient's name: found by the name, never by the token or the id", async () => {
    type Hit = { message: { id: string; body: string }; snippet: string };
    const search = async (token: string, q: string) => {
      const res = await t.request({
        method: 'GET',
        url: `/api/v1/direct-messages/search?q=${encodeURIComponent(q)}&limit=100`,
        token,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().items as Hit[];
    };
    const ids = (hits: Hit[]) => hits.map((h) => h.message.id).sort();
    const eleanor = await createPatient(t, admin.token, { givenName: 'Eleanor', familyName: 'Vance' });
    const send = async (token: string, to: string, body: string) => {
      const res = await sendDm(t, token, { recipients: [to], body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().message.id as string;
    };
    const whatsapp = await send(
      bob.token,
      carol.userId,
      `Morning! @patient:${eleanor.id} asked on WhatsApp for a refill`,
    );
    const callBack = await send(carol.token, dave.userId, `Can you call @patient:${eleanor.id} back today?`);
    const portal = await send(bob.token, dave.userId, 'The new patient portal goes live on Monday');
    // Another workspace's patient of the same name, mentioned there.
    const theirs = await createPatient(t, other.admin.token, { givenName: 'Eleanor', familyName: 'Vance' });
    const otherBob = await addMember(t, other, { name: 'Otto Other' });
    const elsewhere = await send(other.admin.token, otherBob.userId, `Chart for @patient:${theirs.id} is ready`);

    // The snippet reads the mention as the name, as the thread does.
    const [hit] = await search(admin.token, 'WhatsApp');
    expect(hit.message.id).toBe(whatsapp);
    expect(hit.snippet).toBe('Morning! @Eleanor Vance asked on <mark>WhatsApp</mark> for a refill');
    // The API's message keeps the wire form; its mentions name the patient.
    expect(hit.message.body).toContain(`@patient:${eleanor.id}`);

    // The name finds the messages mentioning the patient, in this workspace only.
    for (const q of ['Vance', 'Eleanor', 'eleanor vance', '"Eleanor Vance"']) {
      expect(ids(await search(admin.token, q)), q).toEqual([whatsapp, callBack].sort());
    }
    const byName = await search(admin.token, 'Vance');
    expect(byName.find((h) => h.message.id === callBack)?.snippet).toContain('call @Eleanor <mark>Vance</mark> back');
    expect(ids(await search(other.admin.token, 'Vance'))).toEqual([elsewhere]);
    // The name and the text together; the name excluded.
    expect(ids(await search(admin.token, 'Vance WhatsApp'))).toEqual([whatsapp]);
    expect(ids(await search(admin.token, 'refill -Vance'))).toEqual([]);
    expect(ids(await search(admin.token, 'refill -Smith'))).toEqual([whatsapp]);

    // The token's text matches nothing: "patient" finds the word, not every mention; the id finds nothing.
    const patientHits = await search(admin.token, 'patient');
    expect(patientHits.map((h) => h.message.id)).toContain(portal);
    expect(patientHits.map((h) => h.message.id)).not.toContain(whatsapp);
    for (const h of patientHits) expect(h.message.body.replace(/@patient:[\w-]+/g, '')).toMatch(/patient/i);
    for (const q of ['pat_', eleanor.id, `@patient:${eleanor.id}`]) {
      expect(await search(admin.token, q), q).toEqual([]);
    }
    // A phrase does not run across a mention ("call back" is not in "call @Eleanor Vance back"), nor from one
    // mentioned name into the next; the phrase with the name in it does.
    const john = await createPatient(t, admin.token, { givenName: 'John', familyName: 'Smith' });
    const both = await send(bob.token, carol.userId, `Seen @patient:${eleanor.id} @patient:${john.id} today`);
    expect(ids(await search(admin.token, '"call back"'))).toEqual([]);
    expect(ids(await search(admin.token, '"Vance John"'))).toEqual([]);
    expect(ids(await search(admin.token, '"John Smith"'))).toEqual([both]);
  });

  it('pages the same ranked set when a matching message arrives meanwhile, and says when older matches were left out', async () => {
    const search = (query: string) =>
      t.request({ method: 'GET', url: `/api/v1/direct-messages/search?${query}`, token: admin.token });
    for (let i = 0; i < 5; i++) await sendDm(t, bob.token, { recipients: [carol.userId], body: `Faxed referral ${i}` });
    const first = await search('q=faxed&limit=2');
    expect(first.json().truncated).toBe(false);
    // A new match lands between the pages.
    await sendDm(t, bob.token, { recipients: [carol.userId], body: 'Faxed referral, the new one' });
    const seen = first.json().items.map((i: { message: { id: string } }) => i.message.id);
    let cursor = first.json().nextCursor;
    while (cursor) {
      const page = await search(`q=faxed&limit=2&cursor=${cursor}`);
      seen.push(...page.json().items.map((i: { message: { id: string } }) => i.message.id));
      cursor = page.json().nextCursor;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);

    // More matches than are ranked: the answer says so.
    const { SEARCH_CANDIDATES } = await import('./repository.js');
    await withSystem(t.app.atrium.db, async (tx) => {
      const [thread] = await queryRows<{ thread_id: string; seq: number }>(
        tx,
        sql`SELECT thread_id, max(seq) AS seq FROM dm_messages WHERE workspace_id = ${ws.id} GROUP BY thread_id LIMIT 1`,
      );
      await tx.execute(sql`INSERT INTO dm_messages (workspace_id, id, thread_id, seq, sender_id, body, mentions)
        SELECT ${ws.id}, 'msg_bulk' || lpad(g::text, 4, '0'), ${thread?.thread_id}, ${Number(thread?.seq)} + g,
               ${bob.userId}, 'Prior authorization form ' || g, '[]'::jsonb
          FROM generate_series(1, ${SEARCH_CANDIDATES}) g`);
    });
    // Exactly as many as are ranked: nothing was left out.
    expect((await search('q=authorization%20form')).json().truncated).toBe(false);
    await withSystem(t.app.atrium.db, async (tx) => {
      const [last] = await queryRows<{ thread_id: string; seq: number }>(
        tx,
        sql`SELECT thread_id, seq FROM dm_messages WHERE id = 'msg_bulk0001'`,
      );
      await tx.execute(sql`INSERT INTO dm_messages (workspace_id, id, thread_id, seq, sender_id, body, mentions)
        VALUES (${ws.id}, 'msg_bulk9999', ${last?.thread_id}, ${Number(last?.seq) + 100000}, ${bob.userId},
                'Prior authorization form again', '[]'::jsonb)`);
    });
    expect((await search('q=authorization%20form')).json().truncated).toBe(true);
  });

  it('gives snippets that keep every character of the text, markup-like or not, and mark only the matches', async () => {
    const search = async (q: string) => {
      const res = await t.request({ method: 'GET', url: `/api/v1/direct-messages/search?q=${q}`, token: admin.token });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().items as { message: { body: string }; snippet: string }[];
    };
    // What a client does with a snippet: the marked parts, the five entities undone.
    const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
    const parts = (snippet: string) => {
      const out: { text: string; match: boolean }[] = [];
      let match = false;
      for (const piece of snippet.split(/(<mark>|<\/mark>)/)) {
        if (piece === '<mark>' || piece === '</mark>') match = piece === '<mark>';
        else if (piece) out.push({ text: piece.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]), match });
      }
      return out;
    };

    const body = 'Titrate until <target a=1> pressure reached, see <note> quokka';
    await sendDm(t, bob.token, { recipients: [carol.userId], body });
    const [hit] = await search('quokka');
    expect(hit.message.body).toBe(body);
    expect(hit.snippet).toBe('Titrate until &lt;target a=1&gt; pressure reached, see &lt;note&gt; <mark>quokka</mark>');
    expect(parts(hit.snippet)).toEqual([
      { text: 'Titrate until <target a=1> pressure reached, see <note> ', match: false },
      { text: 'quokka', match: true },
    ]);

    // Entities, quotes, a literal <mark> and the private-use characters the server marks matches with: all text.
    const tricky = 'Dose "A" & \'B\' <5 mg> &lt;b&gt; <mark>not a match</mark> x<y>z \uE000wombat\uE001 ok';
    await sendDm(t, bob.token, { recipients: [carol.userId], body: tricky });
    const [other] = await search('wombat');
    expect(other.message.body).toBe(tricky);
    const got = parts(other.snippet);
    expect(got.filter((p) => p.match).map((p) => p.text)).toEqual(['wombat']);
    // ts_headline picks the excerpt around the match: a stretch of the text as it is, marks and all.
    const excerpt = got.map((p) => p.text).join('');
    expect(tricky.replace(/[\uE000\uE001]/g, '')).toContain(excerpt);
    expect(excerpt).toContain('not a match</mark> x<y>z wombat');

    const quoted = `"O'Neil" & co <re> numbat "O'Neil" & co`;
    await sendDm(t, bob.token, { recipients: [carol.userId], body: quoted });
    const [third] = await search('numbat');
    expect(third.snippet).toContain('Neil&quot; &amp; co &lt;re&gt; <mark>numbat</mark> &quot;O&#39;Neil');
    expect(quoted).toContain(
      parts(third.snippet)
        .map((p) => p.text)
        .join(''),
    );
  });
});
