// Threads whose participants were removed from the workspace: sending where no one else is a member
// any more is refused (409 recipients_left); a group with someone left works for them; a member who is
// removed and added again reads their old threads from their return on, never what was sent meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, type TestUser, type TestWorkspace } from '../../../test/helpers/factories.js';
import { receiptsOf } from './service.js';
import { sendDm } from './test-support.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const remove = async (user: TestUser) => {
  const res = await t.request({ method: 'DELETE', url: `/api/v1/members/${user.userId}`, token: ws.admin.token });
  expect(res.statusCode, res.body).toBe(204);
};
const sendIn = (token: string, threadId: string, body: string) =>
  t.request({ method: 'POST', url: `/api/v1/direct-messages/${threadId}`, token, payload: { body } });
const history = async (token: string, threadId: string) => {
  const res = await t.request({ method: 'GET', url: `/api/v1/direct-messages/${threadId}`, token });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().items as { body: string }[]).map((m) => m.body);
};
const threads = async (token: string) => {
  const res = await t.request({ method: 'GET', url: '/api/v1/direct-messages', token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as { id: string; unreadCount: number; lastMessage: { body: string } | null }[];
};

describe('sending into a thread whose others left', () => {
  it('is refused with 409 recipients_left when no other participant is a member, and nothing is stored', async () => {
    const bob = await addMember(t, ws, { name: 'Bob Gone' });
    const first = await sendDm(t, ws.admin.token, { recipients: [bob.userId], body: 'Hello Bob' });
    expect(first.statusCode, first.body).toBe(201);
    const { threadId } = first.json();
    await remove(bob);

    const refused = await sendIn(ws.admin.token, threadId, 'Are you there?');
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'recipients_left' });
    const alsoRefused = await sendDm(t, ws.admin.token, { threadId, body: 'Are you there?' });
    expect([alsoRefused.statusCode, alsoRefused.json().code]).toEqual([409, 'recipients_left']);
    expect(await history(ws.admin.token, threadId)).toEqual(['Hello Bob']);

    // Someone outside the thread still learns only that it is not found.
    const stranger = await addMember(t, ws);
    expect((await sendIn(stranger.token, threadId, 'hi')).statusCode).toBe(404);
  });

  it('works in a group where someone else is still a member', async () => {
    const carol = await addMember(t, ws, { name: 'Carol Stays' });
    const dave = await addMember(t, ws, { name: 'Dave Leaves' });
    const group = await sendDm(t, ws.admin.token, { recipients: [carol.userId, dave.userId], body: 'Team' });
    expect(group.statusCode, group.body).toBe(201);
    await remove(dave);
    const sent = await sendIn(ws.admin.token, group.json().threadId, 'Still here, Carol?');
    expect(sent.statusCode, sent.body).toBe(201);
    expect(await history(carol.token, group.json().threadId)).toEqual(['Still here, Carol?', 'Team']);
  });
});

describe('a thread with someone who was removed', () => {
  it("publishes no read receipt of theirs (the event stream sends members' only)", async () => {
    const kim = await addMember(t, ws, { name: 'Kim Reads' });
    const sent = await sendDm(t, ws.admin.token, { recipients: [kim.userId], body: 'Read me' });
    const { threadId } = sent.json();
    const read = await t.request({
      method: 'PATCH',
      url: `/api/v1/direct-messages/${threadId}`,
      token: kim.token,
      payload: { read: true },
    });
    expect(read.statusCode, read.body).toBeLessThan(300);
    const ctx = { workspaceId: ws.id, userId: ws.admin.userId } as Parameters<typeof receiptsOf>[1];
    expect((await receiptsOf(t.app.atrium, ctx, threadId)).map((r) => r.userId)).toContain(kim.userId);
    await remove(kim);
    expect((await receiptsOf(t.app.atrium, ctx, threadId)).map((r) => r.userId)).not.toContain(kim.userId);
    // The history's receipts: members' only too.
    const seen = await t.request({ method: 'GET', url: `/api/v1/direct-messages/${threadId}`, token: ws.admin.token });
    expect(seen.statusCode, seen.body).toBe(200);
    const receipts = seen.json().receipts as { userId: string }[];
    expect(receipts.map((r) => r.userId)).toContain(ws.admin.userId);
    expect(receipts.map((r) => r.userId)).not.toContain(kim.userId);
  });

  it('keeps them under their name, marked former, in the list, the history and search; the 409 names them', async () => {
    const sam = await addMember(t, ws, { name: 'Sam Rivera' });
    const lee = await addMember(t, ws, { name: 'Dr. Morgan Lee' });
    const ann = await addMember(t, ws, { name: 'Ann Stays' });
    const direct = await sendDm(t, sam.token, { recipients: [lee.userId], body: 'Can you see Mr. Okafor at 3?' });
    const group = await sendDm(t, sam.token, { recipients: [lee.userId, ann.userId], body: 'Rota for kestrels' });
    const threadId = direct.json().threadId as string;
    await remove(lee);

    const listed = (await threads(sam.token)) as unknown as {
      id: string;
      title: string;
      participants: { userId: string; name: string; former: boolean }[];
    }[];
    const thread = listed.find((th) => th.id === threadId);
    expect(thread?.title).toBe('Dr. Morgan Lee (no longer a member)');
    expect(thread?.participants).toEqual(
      expect.arrayContaining([
        { userId: sam.userId, name: 'Sam Rivera', former: false },
        { userId: lee.userId, name: 'Dr. Morgan Lee', former: true },
      ]),
    );
    expect(thread?.participants).toHaveLength(2);
    // In a group, in the same order as before (joined together: by name), their name marked in the title.
    const groupItem = listed.find((th) => th.id === group.json().threadId);
    expect(groupItem?.title).toBe('Ann Stays, Dr. Morgan Lee (no longer a member)');
    expect(groupItem?.participants.map((p) => [p.name, p.former])).toEqual([
      ['Ann Stays', false],
      ['Dr. Morgan Lee', true],
      ['Sam Rivera', false],
    ]);

    const opened = await t.request({ method: 'GET', url: `/api/v1/direct-messages/${threadId}`, token: sam.token });
    expect(opened.json().thread).toMatchObject({ title: 'Dr. Morgan Lee (no longer a member)' });
    expect(opened.json().thread.participants).toContainEqual({
      userId: lee.userId,
      name: 'Dr. Morgan Lee',
      former: true,
    });
    expect(opened.json().items.map((m: { body: string }) => m.body)).toEqual(['Can you see Mr. Okafor at 3?']);

    const found = await t.request({
      method: 'GET',
      url: '/api/v1/direct-messages/search?q=kestrels',
      token: ws.admin.token,
    });
    expect(found.json().items[0].thread.participants).toContainEqual({
      userId: lee.userId,
      name: 'Dr. Morgan Lee',
      former: true,
    });

    // Sending there is refused, and the refusal says who the thread was with.
    const refused = await sendIn(sam.token, threadId, 'Hello?');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      code: 'recipients_left',
      formerParticipants: [{ userId: lee.userId, name: 'Dr. Morgan Lee' }],
    });
    expect(refused.json().detail).toContain('Dr. Morgan Lee is no longer a member of this workspace');
    const alsoRefused = await sendDm(t, sam.token, { threadId, body: 'Hello?' });
    expect(alsoRefused.json()).toMatchObject({
      code: 'recipients_left',
      formerParticipants: [{ name: 'Dr. Morgan Lee' }],
    });

    // Back again (same account): a member again, not former; they read only what comes after their return.
    const back = await addMember(t, ws, { name: 'Dr. Morgan Lee', email: lee.email });
    expect(back.userId).toBe(lee.userId);
    const again = (await threads(sam.token)) as unknown as typeof listed;
    expect(again.find((th) => th.id === threadId)).toMatchObject({
      title: 'Dr. Morgan Lee',
      participants: expect.arrayContaining([{ userId: lee.userId, name: 'Dr. Morgan Lee', former: false }]),
    });
    expect((await sendIn(sam.token, threadId, 'Welcome back')).statusCode).toBe(201);
    expect(await history(back.token, threadId)).toEqual(['Welcome back']);
  });
});

describe('a member added back', () => {
  it('reads their old threads from their return on: nothing sent before it, nor while they were away', async () => {
    const email = `erin-${ws.id}@example.test`;
    const erin = await addMember(t, ws, { name: 'Erin Returns', email });
    const carol = await addMember(t, ws, { name: 'Carol Desk' });
    const group = await sendDm(t, ws.admin.token, { recipients: [erin.userId, carol.userId], body: 'Before' });
    const threadId = group.json().threadId as string;
    const direct = await sendDm(t, ws.admin.token, { recipients: [erin.userId], body: 'Just us' });
    await remove(erin);
    expect((await sendIn(ws.admin.token, threadId, 'About Erin, while she is away')).statusCode).toBe(201);

    const back = await addMember(t, ws, { name: 'Erin Returns', email });
    expect(back.userId).toBe(erin.userId);
    // The old threads are hers again, from now on: no message of before, nothing unread.
    const listed = await threads(back.token);
    const mine = listed.find((th) => th.id === threadId);
    expect(mine).toMatchObject({ lastMessage: null, unreadCount: 0 });
    expect(await history(back.token, threadId)).toEqual([]);
    expect(await history(back.token, direct.json().threadId)).toEqual([]);

    // What is sent after her return she reads; and she can be written to again 1:1.
    expect((await sendIn(carol.token, threadId, 'Welcome back!')).statusCode).toBe(201);
    expect((await sendIn(ws.admin.token, direct.json().threadId, 'Hi again')).statusCode).toBe(201);
    expect(await history(back.token, threadId)).toEqual(['Welcome back!']);
    expect(await history(back.token, direct.json().threadId)).toEqual(['Hi again']);
    expect((await threads(back.token)).find((th) => th.id === threadId)).toMatchObject({
      lastMessage: { body: 'Welcome back!' },
      unreadCount: 1,
    });
    // The others still read the whole thread.
    expect(await history(carol.token, threadId)).toEqual(['Welcome back!', 'About Erin, while she is away', 'Before']);
  });
});
