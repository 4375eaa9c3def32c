// The README's "Try the assistant" prompts, against the demo seed, as admin@riverside.example: each
// one works in plain words and the answers show no internal ids or tool names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/helpers/app.js';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '../../../seed.js';

let t: TestApp;
let cookie = '';

const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  t.request({ method, url, payload, headers: { cookie, 'x-requested-with': 'fetch' } });

beforeAll(async () => {
  t = await createTestApp();
  await seedDemo(t.app);
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/auth/sign-in',
    payload: { email: DEMO_USERS[0].email, password: DEMO_PASSWORD },
  });
  expect(res.statusCode, res.body).toBe(200);
  cookie = `atrium_session=${/atrium_session=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1]}`;
  for (const [slug, scopes] of [
    ['insurance-eligibility', ['patients:read', 'billing:read']],
    ['billing-codes', ['patients:read']],
    ['telehealth-brief', ['patients:read', 'billing:read']],
    ['mail-spam-filter', ['mail:read']],
    ['authorized-units', ['patients:read']],
  ] as const) {
    const install = await call('POST', '/api/v1/marketplace/install', { slug, scopes: [...scopes] });
    // The demo already has the spam filter installed (the Mail page's labels): installing again is 200.
    expect([200, 201], install.body).toContain(install.statusCode);
  }
});
afterAll(async () => t?.close());

const PLAIN =
  /\b[a-z]{2,5}_[0-9a-z]{20,40}\b|__|check_eligibility|suggest_codes|precall_brief|lookup_patient|units_remaining/;

async function say(conversation: string | undefined, content: string) {
  const res = conversation
    ? await call('POST', `/api/v1/chat/conversations/${conversation}/messages`, { content })
    : await call('POST', '/api/v1/chat/conversations', { content });
  expect(res.statusCode, res.body).toBe(conversation ? 200 : 201);
  const body = res.json() as {
    conversation: { id: string };
    message: { content: string };
    toolCalls: { tool: string; outcome: string; summary: string }[];
  };
  expect(body.message.content).not.toMatch(PLAIN);
  return body;
}

describe('README demo prompts', () => {
  it("checks Eleanor Vance's eligibility, then codes her last note", async () => {
    const first = await say(undefined, "Check Eleanor Vance's insurance eligibility");
    expect(first.toolCalls.map((c) => [c.tool, c.outcome])).toEqual([
      ['lookup_patient', 'ok'],
      ['check_eligibility', 'ok'],
    ]);
    expect(first.message.content).toMatch(/active/i);
    const next = await say(first.conversation.id, 'Suggest billing codes for her last note');
    expect(next.toolCalls.map((c) => [c.tool, c.outcome])).toEqual([
      ['lookup_patient', 'ok'],
      ['suggest_codes_for_note', 'ok'],
    ]);
    expect(next.message.content).toContain('I10');
  });

  it('asks which Marcus Okafor, then prepares the brief for the one chosen', async () => {
    const ask = await say(undefined, 'Prepare a pre-call brief for Marcus Okafor');
    expect(ask.message.content).toContain('Which one do you mean?');
    expect(ask.message.content).toContain('1987-11-02');
    expect(ask.message.content).toContain('1994-05-09');
    const brief = await say(ask.conversation.id, 'The one born 1994-05-09');
    expect(brief.toolCalls.map((c) => [c.tool, c.outcome])).toEqual([
      ['lookup_patient', 'ok'],
      ['precall_brief', 'ok'],
    ]);
    expect(brief.message.content).toContain('Marcus Okafor');
  });

  it('tells the authorized units left and classifies spam', async () => {
    const units = await say(undefined, 'How many authorized units does Eleanor Vance have left?');
    expect(units.toolCalls.map((c) => c.tool)).toEqual(['lookup_patient', 'units_remaining']);
    expect(units.message.content).toContain('Eleanor Vance');
    const spam = await say(undefined, 'Is this email spam: You won a prize, click here to claim');
    expect(spam.toolCalls.map((c) => [c.tool, c.outcome])).toEqual([['classify_message', 'ok']]);
    expect(spam.message.content).toMatch(/spam/i);
  });
});
