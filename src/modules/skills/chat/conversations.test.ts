// Assistant conversations kept per user: start, continue with the stored turns as context
// ("her" resolves to the patient named in an earlier turn), list, read, delete; nobody else sees them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/helpers/app.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  const install = await t.request({
    method: 'POST',
    url: '/api/v1/marketplace/install',
    token: ws.admin.token,
    payload: { slug: 'billing-codes', scopes: ['patients:read'] },
  });
  expect(install.statusCode, install.body).toBe(201);
  const maria = await createPatient(t, ws.admin.token, { givenName: 'Maria', familyName: 'Lopez' });
  await t.request({
    method: 'POST',
    url: '/api/v1/notes',
    token: ws.admin.token,
    payload: { patientId: maria.id, assessment: 'Essential hypertension, follow-up visit' },
  });
});
afterAll(async () => t?.close());

describe('assistant conversations', () => {
  it('starts, continues with the stored context, lists, reads and deletes; others get 404', async () => {
    const started = await t.request({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      token: ws.admin.token,
      payload: { content: 'Suggest billing codes for Maria Lopez’s last note' },
    });
    expect(started.statusCode, started.body).toBe(201);
    const first = started.json();
    expect(first.conversation.title).toBe('Suggest billing codes for Maria Lopez’s last note');
    expect(first.message.content).toContain('I10');
    const id = first.conversation.id as string;

    // "her" refers to Maria, named in the stored first turn.
    const next = await t.request({
      method: 'POST',
      url: `/api/v1/chat/conversations/${id}/messages`,
      token: ws.admin.token,
      payload: { content: 'And billing codes for her last note again please' },
    });
    expect(next.statusCode, next.body).toBe(200);
    expect(next.json().toolCalls.map((c: { tool: string }) => c.tool)).toEqual([
      'lookup_patient',
      'suggest_codes_for_note',
    ]);

    const list = await t.request({ method: 'GET', url: '/api/v1/chat/conversations', token: ws.admin.token });
    expect(list.json().items.map((c: { id: string }) => c.id)).toEqual([id]);
    const detail = (
      await t.request({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, token: ws.admin.token })
    ).json();
    expect(detail.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(detail.messages[1].toolCalls[1]).toMatchObject({ label: 'Suggest codes for note', outcome: 'ok' });
    expect(JSON.stringify(detail.messages.filter((m: { role: string }) => m.role === 'assistant'))).not.toMatch(
      /\bpat_[0-9a-z]{20,}/,
    );

    // A colleague in the same workspace and another workspace's admin see nothing of it.
    const colleague = await addMember(t, ws, { role: 'admin' });
    const other = await createWorkspace(t, { tier: 'standard' });
    for (const token of [colleague.token, other.admin.token]) {
      expect((await t.request({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, token })).statusCode).toBe(404);
      const post = await t.request({
        method: 'POST',
        url: `/api/v1/chat/conversations/${id}/messages`,
        token,
        payload: { content: 'hello' },
      });
      expect(post.statusCode).toBe(404);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/chat/conversations/${id}`, token })).statusCode).toBe(
        404,
      );
      expect((await t.request({ method: 'GET', url: '/api/v1/chat/conversations', token })).json().items).toEqual([]);
    }

    const removed = await t.request({
      method: 'DELETE',
      url: `/api/v1/chat/conversations/${id}`,
      token: ws.admin.token,
    });
    expect(removed.statusCode).toBe(204);
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, token: ws.admin.token })).statusCode,
    ).toBe(404);
  });

  it('refuses an empty message and stores nothing', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      token: ws.admin.token,
      payload: { content: '   ' },
    });
    expect(res.statusCode).toBe(400);
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/chat/conversations', token: ws.admin.token })).json().items,
    ).toEqual([]);
  });
});
