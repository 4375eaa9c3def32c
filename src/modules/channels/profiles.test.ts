// Contact names for Messenger and Instagram (their webhooks carry none): the Graph profile read against the
// Meta emulator over HTTP (found, unknown id, refusals, an outage), and the `channels.contact-profile` job
// end to end: a message in → the name stored and the inbox told; a burst → one lookup; a refusal → no name,
// dead at once, not asked again; an outage → retried; a name given meanwhile kept; another workspace's
// contact never looked up with this workspace's token.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { type Connected, connectChannel, deliver, providerId, senderId } from '../../../test/helpers/channels.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { openSse } from '../../../test/helpers/sse.js';
import { queryRows, withSystem, withTenant } from '../../platform/db/tenant.js';
import { enqueueJob, runDueJobs } from '../../platform/jobs/index.js';
import { resetBreakers } from '../../platform/upstream/index.js';
import { contactProfileJob } from './profiles.js';
import { ADAPTERS } from './providers/index.js';

const { messenger, instagram } = ADAPTERS;

let t: TestApp;
let ws: TestWorkspace;
let page: Connected;
let insta: Connected;

const emulator = (path: string) => `${t.baseUrl}/_emulators/meta${path}`;
const post = (path: string, body: unknown) =>
  fetch(emulator(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const fault = (body: Record<string, unknown>) => post('/faults', { operation: 'profile.get', ...body });
const lookupsOf = async (id: string): Promise<number> =>
  ((await (await fetch(emulator(`/lookups?id=${id}`))).json()) as { items: unknown[] }).items.length;

const runLookups = () => runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [contactProfileJob] });

const rows = <T>(query: ReturnType<typeof sql>) => withSystem(t.app.atrium.db, (tx) => queryRows<T>(tx, query));

const contactOf = async (connection: Connected, externalId: string) =>
  (
    await rows<{ id: string; name: string | null; name_refused_at: Date | null; workspace_id: string }>(
      sql`SELECT id, name, name_refused_at, workspace_id FROM channel_contacts
           WHERE connection_id = ${connection.id} AND external_id = ${externalId}`,
    )
  )[0];

const jobsOf = (contactId: string) =>
  rows<{ id: string; status: string; attempts: number; last_error: string | null }>(
    sql`SELECT id, status, attempts, last_error FROM jobs
         WHERE type = 'channels.contact-profile' AND payload->>'contactId' = ${contactId} ORDER BY created_at`,
  );

/** Makes every queued lookup due now (a retry's backoff passed). */
const dueNow = () =>
  withSystem(t.app.atrium.db, (tx) =>
    tx.execute(sql`UPDATE jobs SET run_at = now() WHERE type = 'channels.contact-profile' AND status = 'queued'`),
  );

/** A person the emulator knows writes to the connection's page (the emulator signs and posts it). */
async function simulate(connection: Connected, person: Record<string, string>, text = 'Hello, is Dr Lee in today?') {
  const res = await post('/simulate', {
    webhookUrl: connection.webhookUrl,
    appSecret: connection.credentials.appSecret,
    object: connection.channel === 'instagram' ? 'instagram' : 'page',
    pageId: connection.credentials.pageId,
    text,
    ...person,
  });
  const body = (await res.json()) as { delivered: boolean; status: number; senderId: string };
  expect(body.status, JSON.stringify(body)).toBe(200);
  return body.senderId;
}

const conversationName = async (externalId: string, token = ws.admin.token) => {
  const res = await t.request({ method: 'GET', url: '/api/v1/channels/conversations?limit=200', token });
  return res.json().items.find((c: { contact: { externalId: string } }) => c.contact.externalId === externalId)?.contact
    .name;
};

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  page = await connectChannel(t, ws.admin.token, 'messenger');
  insta = await connectChannel(t, ws.admin.token, 'instagram');
}, 60_000);
afterAll(async () => t?.close());
beforeEach(async () => {
  resetBreakers();
  await fetch(emulator('/faults'), { method: 'DELETE' });
});

describe('Graph profile read (Meta emulator, over HTTP)', () => {
  const context = (key: string) => ({ baseUrl: emulator(''), requestId: 'req_profile_test', breakerKey: key });

  it("tells a Messenger person's first and last name, an Instagram person's name or handle", async () => {
    const user = (await (await post('/users', { firstName: 'Ana', lastName: 'Lima' })).json()) as { id: string };
    expect(await messenger.profile!(context('a'), page.credentials, user.id)).toEqual({
      outcome: 'found',
      name: 'Ana Lima',
    });
    const ig = (await (await post('/users', { name: 'Bo Chen', username: 'bochen' })).json()) as { id: string };
    expect(await instagram.profile!(context('a'), insta.credentials, ig.id)).toEqual({
      outcome: 'found',
      name: 'Bo Chen',
    });
    const handle = (await (await post('/users', { username: 'cy.d' })).json()) as { id: string };
    expect(await instagram.profile!(context('a'), insta.credentials, handle.id)).toEqual({
      outcome: 'found',
      name: '@cy.d',
    });
    // Graph's shape: the fields asked for, with the id.
    const raw = await fetch(emulator(`/v21.0/${user.id}?fields=first_name,last_name`), {
      headers: { authorization: `Bearer ${page.credentials.accessToken}` },
    });
    expect(await raw.json()).toEqual({ id: user.id, first_name: 'Ana', last_name: 'Lima' });
  });

  it('an unknown id is refused with Graph’s 100/33 (no words about the person kept); a non-numeric id is not asked', async () => {
    const unknown = '6000000000000123';
    const raw = await fetch(emulator(`/v21.0/${unknown}?fields=first_name,last_name`), {
      headers: { authorization: `Bearer ${page.credentials.accessToken}` },
    });
    expect(raw.status).toBe(400);
    const error = ((await raw.json()) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ code: 100, error_subcode: 33, type: 'GraphMethodException' });
    expect(typeof error.fbtrace_id).toBe('string');
    expect(await messenger.profile!(context('b'), page.credentials, unknown)).toEqual({
      outcome: 'refused',
      reason: 'Graph answered 400, code 100/33',
    });
    const before = (await (await fetch(emulator('/lookups'))).json()).items.length;
    expect(await messenger.profile!(context('b'), page.credentials, '../me')).toMatchObject({ outcome: 'refused' });
    expect((await (await fetch(emulator('/lookups'))).json()).items.length).toBe(before);
  });

  it('a bad token (190) is refused; an outage (503, after the GET’s own retries) or a rate limit is unavailable', async () => {
    const user = (await (await post('/users', { firstName: 'Dee', lastName: 'Ray' })).json()) as { id: string };
    await fault({
      status: 400,
      body: { error: { message: 'Error validating access token', type: 'OAuthException', code: 190, fbtrace_id: 'x' } },
    });
    expect(await messenger.profile!(context('c'), page.credentials, user.id)).toEqual({
      outcome: 'refused',
      reason: 'Graph answered 400, code 190',
    });
    // 503 three times: the first call and both retries of the idempotent GET.
    await fault({ status: 503, times: 3 });
    const lookups = await lookupsOf(user.id);
    expect(await messenger.profile!(context('c'), page.credentials, user.id)).toMatchObject({
      outcome: 'unavailable',
      reason: 'Graph answered 503, code 2',
    });
    expect(await lookupsOf(user.id)).toBe(lookups + 3);
    // Graph's rate limit (code 4 on a 400) is "not now", not "no".
    await fault({ status: 400, body: { error: { message: 'Application request limit reached', code: 4 } } });
    expect(await messenger.profile!(context('c'), page.credentials, user.id)).toMatchObject({ outcome: 'unavailable' });
    // Once the outage is over the same read answers.
    expect(await messenger.profile!(context('c'), page.credentials, user.id)).toEqual({
      outcome: 'found',
      name: 'Dee Ray',
    });
  });
});

describe('channels.contact-profile', () => {
  it('a message from a nameless Messenger contact → one lookup → the name in the inbox, live', async () => {
    const from = await simulate(page, { firstName: 'Ana', lastName: 'Lima' });
    const contact = await contactOf(page, from);
    expect(contact.name).toBeNull();
    expect(await conversationName(from)).toBeNull();
    const queued = await jobsOf(contact.id);
    expect(queued.map((j) => j.status)).toEqual(['queued']);

    const stream = await openSse(t.baseUrl, '/api/v1/channels/events', ws.admin.token);
    try {
      const conversationId = (
        await rows<{ id: string }>(sql`SELECT id FROM channel_conversations WHERE contact_id = ${contact.id}`)
      )[0].id;
      await runLookups();
      expect((await contactOf(page, from)).name).toBe('Ana Lima');
      expect(await conversationName(from)).toBe('Ana Lima');
      await stream.waitFor((all) => all.some((e) => e.data.includes(conversationId)));
    } finally {
      stream.close();
    }
    expect((await jobsOf(contact.id)).map((j) => j.status)).toEqual(['done']);
    expect(await lookupsOf(from)).toBe(1);

    // Named now: the next message asks nothing.
    await simulate(page, { senderId: from, firstName: 'Ana', lastName: 'Lima' }, 'Thanks!');
    expect(await jobsOf(contact.id)).toHaveLength(1);
  });

  it('Instagram: the name (or the handle) is stored the same way', async () => {
    const from = await simulate(insta, { name: 'Bo Chen', username: 'bochen' });
    await runLookups();
    expect((await contactOf(insta, from)).name).toBe('Bo Chen');
    // Without a display name, the handle.
    const handleOnly = await simulate(insta, { username: 'cy.d' });
    await runLookups();
    expect((await contactOf(insta, handleOnly)).name).toBe('@cy.d');
  });

  it('a burst of messages from one contact makes one lookup', async () => {
    const from = senderId('messenger');
    await post('/users', { id: from, firstName: 'Cy', lastName: 'Dunn' });
    for (const text of ['Hi', 'Are you open?', 'On Saturday?'])
      expect((await deliver(t, page, { id: providerId('messenger'), from, text })).statusCode).toBe(200);
    const contact = await contactOf(page, from);
    expect(await jobsOf(contact.id)).toHaveLength(1);
    await runLookups();
    expect(await lookupsOf(from)).toBe(1);
    expect((await contactOf(page, from)).name).toBe('Cy Dunn');
  });

  it('a refusal leaves the name empty, ends the job at once without a notice, and the contact is not asked again', async () => {
    const notices = async () =>
      (await rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM inbox_items WHERE workspace_id = ${ws.id}`))[0].n;
    const noticesBefore = await notices();
    // Nobody the emulator knows: Graph's 100/33 (as for a person whose privacy hides them).
    const from = senderId('messenger');
    expect((await deliver(t, page, { id: providerId('messenger'), from, text: 'Hello' })).statusCode).toBe(200);
    const contact = await contactOf(page, from);
    await runLookups();
    await dueNow();
    await runLookups();
    const [job] = await jobsOf(contact.id);
    expect(job).toMatchObject({ status: 'dead', attempts: 1 });
    expect(job.last_error).toBe('refused: Graph answered 400, code 100/33');
    expect(await lookupsOf(from)).toBe(1);
    const after = await contactOf(page, from);
    expect(after.name).toBeNull();
    expect(after.name_refused_at).not.toBeNull();
    expect(await notices()).toBe(noticesBefore);
    // More messages: no new lookup (30 days).
    for (const text of ['Hello?', 'Anyone?'])
      expect((await deliver(t, page, { id: providerId('messenger'), from, text })).statusCode).toBe(200);
    expect(await jobsOf(contact.id)).toHaveLength(1);
    await runLookups();
    expect(await lookupsOf(from)).toBe(1);

    // A token Graph no longer accepts (190): the same, dead after one attempt.
    const other = senderId('messenger');
    await post('/users', { id: other, firstName: 'Eve', lastName: 'Fox' });
    await fault({
      status: 400,
      body: { error: { message: 'Error validating access token', type: 'OAuthException', code: 190, fbtrace_id: 'y' } },
    });
    expect((await deliver(t, page, { id: providerId('messenger'), from: other, text: 'Hi' })).statusCode).toBe(200);
    await runLookups();
    const otherContact = await contactOf(page, other);
    expect((await jobsOf(otherContact.id)).map((j) => [j.status, j.attempts, j.last_error])).toEqual([
      ['dead', 1, 'refused: Graph answered 400, code 190'],
    ]);
    expect(otherContact.name).toBeNull();
  });

  it('an outage is retried with backoff, and the name comes when Graph is back', async () => {
    const from = senderId('messenger');
    await post('/users', { id: from, firstName: 'Gus', lastName: 'Hart' });
    // Three 503s: one attempt's call and both of its retries.
    await fault({ status: 503, times: 3 });
    expect((await deliver(t, page, { id: providerId('messenger'), from, text: 'Hi' })).statusCode).toBe(200);
    const contact = await contactOf(page, from);
    await runLookups();
    let [job] = await jobsOf(contact.id);
    expect(job).toMatchObject({ status: 'queued', attempts: 1, last_error: 'Graph answered 503, code 2' });
    // Not due again before its backoff.
    expect(await runLookups()).toBe(0);
    expect((await contactOf(page, from)).name).toBeNull();
    await dueNow();
    await runLookups();
    [job] = await jobsOf(contact.id);
    expect(job).toMatchObject({ status: 'done', attempts: 2 });
    expect((await contactOf(page, from)).name).toBe('Gus Hart');
    expect(await lookupsOf(from)).toBe(4);
  });

  it('a name given meanwhile is kept: the lookup asks nothing', async () => {
    const from = senderId('messenger');
    await post('/users', { id: from, firstName: 'Ida', lastName: 'Ives' });
    expect((await deliver(t, page, { id: providerId('messenger'), from, text: 'Hi' })).statusCode).toBe(200);
    const contact = await contactOf(page, from);
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(sql`UPDATE channel_contacts SET name = 'Ida (front desk)' WHERE id = ${contact.id}`),
    );
    await runLookups();
    expect((await contactOf(page, from)).name).toBe('Ida (front desk)');
    expect(await lookupsOf(from)).toBe(0);
    expect((await jobsOf(contact.id)).map((j) => j.status)).toEqual(['done']);
  });

  it("another workspace's contact is never looked up with this workspace's token", async () => {
    const other = await createWorkspace(t, { tier: 'standard' });
    const otherPage = await connectChannel(t, other.admin.token, 'messenger');
    const from = senderId('messenger');
    await post('/users', { id: from, firstName: 'Jo', lastName: 'King' });
    expect((await deliver(t, otherPage, { id: providerId('messenger'), from, text: 'Hi' })).statusCode).toBe(200);
    const theirs = await contactOf(otherPage, from);
    expect(theirs.workspace_id).toBe(other.id);
    // Their own lookup is set aside; this workspace's job names their contact.
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(sql`DELETE FROM jobs WHERE type = 'channels.contact-profile' AND workspace_id = ${other.id}`),
    );
    await withTenant(t.app.atrium.db, { workspaceId: ws.id }, (tx) =>
      enqueueJob(tx, contactProfileJob, { contactId: theirs.id }, { workspaceId: ws.id }),
    );
    await runLookups();
    expect(await lookupsOf(from)).toBe(0);
    expect((await contactOf(otherPage, from)).name).toBeNull();
    expect((await jobsOf(theirs.id)).map((j) => j.status)).toEqual(['done']);
    // And their inbox still shows the id, not a name from anywhere else.
    expect(await conversationName(from, other.admin.token)).toBeNull();
  });
});
