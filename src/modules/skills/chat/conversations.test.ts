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

// biome-ignore lint/suspicious/noExplicitAny: event payloads are checked field by field
function parseSse(body: string): { event: string; data: any }[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

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
    // Which model answered is kept with each turn (the web app labels the offline model's answers after a reload).
    expect(detail.messages.map((m: { offline: boolean }) => m.offline)).toEqual([false, true, false, true]);
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

  it('streams a turn as Server-Sent Events: a tool card per call, then the answer in deltas, then done', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      token: ws.admin.token,
      headers: { accept: 'text/event-stream' },
      payload: { content: 'Suggest billing codes for Maria Lopez’s last note' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(res.body);
    const kinds = events.map((e) => e.event);
    // Order: every tool card first (as the calls finish), then the text, then done, nothing after.
    expect(kinds.slice(0, 2)).toEqual(['tool', 'tool']);
    expect(kinds.at(-1)).toBe('done');
    expect(kinds.slice(2, -1).every((k) => k === 'delta')).toBe(true);
    expect(kinds.filter((k) => k === 'delta').length).toBeGreaterThan(1);
    expect(events[0].data).toMatchObject({ label: 'Patient lookup', outcome: 'ok' });
    expect(events[0].data.summary).toContain('Maria Lopez');
    expect(events[1].data).toMatchObject({ slug: 'billing-codes', tool: 'suggest_codes_for_note', outcome: 'ok' });
    const done = events.at(-1)!.data;
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.text)
      .join('');
    expect(text).toBe(done.message.content);
    expect(text).toContain('I10');
    expect(JSON.stringify(events.slice(0, -1))).not.toMatch(/\b[a-z]{2,5}_[0-9a-z]{20,40}\b/);

    // The streamed turn is stored like any other, and continuing it streams too.
    const id = done.conversation.id as string;
    const detail = await t.request({ method: 'GET', url: `/api/v1/chat/conversations/${id}`, token: ws.admin.token });
    expect(detail.json().messages.map((m: { content: string }) => m.content)).toEqual([
      'Suggest billing codes for Maria Lopez’s last note',
      done.message.content,
    ]);
    const next = await t.request({
      method: 'POST',
      url: `/api/v1/chat/conversations/${id}/messages`,
      token: ws.admin.token,
      headers: { accept: 'text/event-stream' },
      payload: { content: 'Billing codes for her last note again' },
    });
    expect(next.statusCode).toBe(200);
    expect(parseSse(next.body).map((e) => e.event)[0]).toBe('tool');

    // Someone else's conversation is a plain 404 problem even when a stream is asked for.
    const other = await createWorkspace(t, { tier: 'standard' });
    const stranger = await t.request({
      method: 'POST',
      url: `/api/v1/chat/conversations/${id}/messages`,
      token: other.admin.token,
      headers: { accept: 'text/event-stream' },
      payload: { content: 'hello' },
    });
    expect(stranger.statusCode).toBe(404);
    expect(stranger.headers['content-type']).toMatch(/^application\/problem\+json/);
    await t.request({ method: 'DELETE', url: `/api/v1/chat/conversations/${id}`, token: ws.admin.token });
  });

  it('streams an error event with the problem when the model fails, and stores nothing', async () => {
    const before = (await t.request({ method: 'GET', url: '/api/v1/chat/conversations', token: ws.admin.token })).json()
      .items.length;
    // The primary model and its fallback both fail.
    for (const operation of ['chat.completions', 'fallback.chat.completions']) {
      await fetch(`${t.baseUrl}/_emulators/ai/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation, status: 500, times: 1 }),
      });
    }
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      token: ws.admin.token,
      headers: { accept: 'text/event-stream' },
      payload: { content: 'Suggest billing codes for Maria Lopez’s last note' },
    });
    const events = parseSse(res.body);
    expect(events.map((e) => e.event)).toEqual(['error']);
    expect(events[0].data).toMatchObject({ status: 502, code: 'upstream_failed' });
    const after = (await t.request({ method: 'GET', url: '/api/v1/chat/conversations', token: ws.admin.token })).json()
      .items.length;
    expect(after).toBe(before);
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
