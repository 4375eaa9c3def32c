// The dead-letter e-mail: it names the endpoint by its URL (host and path, never credentials or the query) and
// description, links to its page, says what to do in steps the page offers, and comes at most once per endpoint
// and admin per hour, the next one summing up what failed meanwhile (the window is kept in the database).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { webhookDeliveryJob } from './jobs/delivery-worker.js';
import { displayUrl, failureMail, heldFailureMail } from './jobs/failure-mail.js';
import { sendHeldFailureMails } from './jobs/failure-mail-digest.js';
import { secretKeys } from './service.js';

let t: TestApp;

beforeAll(async () => {
  // No background worker: the e-mails stay queued as mail.send jobs, read below.
  t = await createTestApp({ webhooks: { retryDelaysMs: [60_000], timeoutMs: 2000, allowCidrs: [] } });
});
afterAll(async () => t?.close());

describe('displayUrl', () => {
  it.each([
    ['https://hooks.example.com/atrium', 'hooks.example.com/atrium'],
    ['https://hooks.example.com:8443/a/b?token=s3cret&x=1', 'hooks.example.com:8443/a/b?…'],
    ['https://user:pass@hooks.example.com/', 'hooks.example.com'],
    ['not a url', '(an unreadable URL)'],
  ])('%s → %s', (url, shown) => {
    expect(displayUrl(url)).toBe(shown);
  });
});

describe('failureMail', () => {
  it('names the endpoint, links to it and says only what the page can do', () => {
    const input = {
      endpointId: 'whk_1',
      url: 'https://hooks.example.com/atrium?token=s3cret',
      description: 'Billing\nsystem',
      eventId: 'evt_1',
      eventType: 'claim.paid',
      attempts: 6,
      lastStatus: 503,
      lastError: 'HTTP 503: down',
      link: 'https://atrium.example/admin/webhooks/whk_1',
      previousSentAt: null,
      held: 0,
      windowMs: 3_600_000,
    };
    const mail = failureMail(input);
    expect(mail.subject).toBe('Webhook delivery failed: claim.paid to hooks.example.com');
    expect(mail.text).toContain('hooks.example.com/atrium?… ("Billing system")');
    expect(mail.text).toContain('https://atrium.example/admin/webhooks/whk_1');
    expect(mail.text).toContain('Last result: HTTP 503 — HTTP 503: down');
    expect(mail.text).toContain('Edit');
    expect(mail.text).toContain('Replay');
    // The Webhooks page's section is called Needs attention (the sidebar's Inbox is patients' messages).
    expect(mail.text).toContain('under Needs attention');
    expect(mail.text).not.toMatch(/\binbox\b/i);
    expect(mail.text).toContain('at most one such e-mail about an endpoint per hour;');
    expect(failureMail({ ...input, windowMs: 600_000 }).text).toContain('per 10 minutes;');
    expect(mail.text).not.toContain('s3cret');
    expect(mail.text).not.toContain('fix the endpoint');
  });
});

describe('heldFailureMail', () => {
  it('says how many more failed since the last e-mail, and what to do', () => {
    const mail = heldFailureMail({
      endpointId: 'whk_1',
      url: 'https://hooks.example.com/atrium',
      description: null,
      link: 'https://atrium.example/admin/webhooks/whk_1',
      previousSentAt: new Date('2026-11-27T09:15:00Z'),
      held: 3,
      windowMs: 3_600_000,
    });
    expect(mail.subject).toBe('Webhook deliveries failed: 3 more events to hooks.example.com');
    expect(mail.text).toContain('(2026-11-27 09:15 UTC)');
    expect(mail.text).toContain('gave up delivering 3 more events');
    expect(mail.text).toContain('Replay');
    expect(mail.text).toContain('https://atrium.example/admin/webhooks/whk_1');
  });
});

describe('dead-letter e-mails', () => {
  let ws: TestWorkspace;
  let endpointId: string;
  let second: { email: string };
  const events = ['evt_mail_1', 'evt_mail_2', 'evt_mail_3', 'evt_mail_4', 'evt_mail_5'];

  const mails = async () =>
    (
      await withSystem(t.database.db, (tx) =>
        queryRows<{ payload: { to: string[]; subject: string; text: string } }>(
          tx,
          sql`SELECT payload FROM jobs WHERE type = 'mail.send' AND workspace_id = ${ws.id} ORDER BY id`,
        ),
      )
    ).map((r) => r.payload);

  /** Dead-letters one event as the worker does when its last retry fails (a fresh job definition each time: a restart). */
  const deadLetter = (eventId: string) =>
    withSystem(t.database.db, (tx) =>
      webhookDeliveryJob({
        webhooks: t.config.webhooks,
        keys: secretKeys(t.app.atrium),
        appUrl: () => t.app.atrium.selfUrl(),
      }).onDead!(tx, {
        id: `job_${eventId}`,
        type: 'webhooks.deliver',
        workspaceId: ws.id,
        attempts: 1,
        payload: { endpointId, eventId },
        error: 'HTTP 503',
      }),
    );

  beforeAll(async () => {
    ws = await createWorkspace(t, { tier: 'advanced' });
    second = await addMember(t, ws, { role: 'admin', email: `Second.Admin-${Date.now()}@Example.test` });
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/admin/webhooks',
      token: ws.admin.token,
      payload: { url: 'https://93.184.216.34/hooks/atrium?token=s3cret', description: 'Billing system' },
    });
    expect(res.statusCode, res.body).toBe(201);
    endpointId = res.json().id;
    // Deliveries as the worker leaves them before their last attempt (no job: nothing is sent).
    await withSystem(t.database.db, async (tx) => {
      for (const eventId of events)
        await tx.execute(sql`INSERT INTO webhook_deliveries
            (workspace_id, endpoint_id, event_id, event_type, state, attempts, last_status, last_error)
          VALUES (${ws.id}, ${endpointId}, ${eventId}, 'patient.created', 'pending', 6, 503, 'HTTP 503: down')`);
    });
  });

  it('names the endpoint by URL and description and links to its page', async () => {
    await deadLetter(events[0]);
    const [mail] = await mails();
    expect(mail.to.sort()).toEqual([ws.admin.email.toLowerCase(), second.email.toLowerCase()].sort());
    expect(mail.subject).toBe('Webhook delivery failed: patient.created to 93.184.216.34');
    expect(mail.text).toContain('93.184.216.34/hooks/atrium?… ("Billing system")');
    expect(mail.text).toContain(`${t.app.atrium.selfUrl()}/admin/webhooks/${endpointId}`);
    expect(mail.text).toContain(events[0]);
    expect(mail.text).not.toContain('s3cret');
  });

  it('mails each admin at most once per endpoint per hour, across restarts; the next one sums up the rest', async () => {
    // An admin added meanwhile gets their first e-mail about the endpoint at once; the others none.
    const third = await addMember(t, ws, { role: 'admin' });
    await deadLetter(events[1]);
    await deadLetter(events[2]);
    let sent = await mails();
    expect(sent).toHaveLength(2);
    expect(sent[1].to).toEqual([third.email.toLowerCase()]);
    expect(sent[1].subject).toBe('Webhook delivery failed: patient.created to 93.184.216.34');

    // Kept in the database: when each admin was last e-mailed, and how many were held back since.
    const kept = await withSystem(t.database.db, (tx) =>
      queryRows<{ recipient: string; held: number }>(
        tx,
        sql`SELECT recipient, held FROM webhook_failure_mails WHERE endpoint_id = ${endpointId} ORDER BY recipient`,
      ),
    );
    expect(Object.fromEntries(kept.map((r) => [r.recipient, r.held]))).toEqual({
      [ws.admin.email.toLowerCase()]: 2,
      [second.email.toLowerCase()]: 2,
      [third.email.toLowerCase()]: 1,
    });

    // An hour later, the next dead letter is e-mailed, with what failed since the last e-mail.
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE webhook_failure_mails SET last_sent_at = last_sent_at - interval '61 minutes'
                      WHERE endpoint_id = ${endpointId}`),
    );
    await deadLetter(events[3]);
    sent = await mails();
    expect(sent).toHaveLength(4);
    const [first, latest] = [sent[2], sent[3]].sort((a, b) => b.to.length - a.to.length);
    expect(first.to.sort()).toEqual([ws.admin.email.toLowerCase(), second.email.toLowerCase()].sort());
    expect(first.subject).toBe('Webhook deliveries failed: patient.created and 2 more to 93.184.216.34');
    expect(first.text).toMatch(/Since the last e-mail about this endpoint \(.+ UTC\), 2 more of its events failed/);
    expect(latest.to).toEqual([third.email.toLowerCase()]);
    expect(latest.subject).toContain('and 1 more');
    // And quiet again for the next hour.
    await deadLetter(events[4]);
    expect(await mails()).toHaveLength(4);

    // Every dead letter is in the inbox, e-mailed or not.
    const inbox = await t.request({ method: 'GET', url: '/api/v1/inbox', token: ws.admin.token });
    expect(
      inbox
        .json()
        .items.map((i: { eventId: string }) => i.eventId)
        .sort(),
    ).toEqual([...events].sort());
  });

  it('at the end of the hour, mails what was held back when no later dead letter came, once', async () => {
    // After the last test each admin holds one dead letter back (events[4]); a fourth admin, no longer an admin,
    // held some back too.
    const gone = await addMember(t, ws, { role: 'admin' });
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`INSERT INTO webhook_failure_mails (workspace_id, endpoint_id, recipient, last_sent_at, held)
                     VALUES (${ws.id}, ${endpointId}, ${gone.email.toLowerCase()}, now(), 1)`),
    );
    const demoted = await t.request({
      method: 'PATCH',
      url: `/api/v1/members/${gone.userId}`,
      token: ws.admin.token,
      payload: { role: 'member' },
    });
    expect(demoted.statusCode, demoted.body).toBe(200);
    const before = (await mails()).length;
    // Within the hour: nothing yet.
    expect(await sendHeldFailureMails(t.app.atrium)).toBe(0);
    expect(await mails()).toHaveLength(before);

    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE webhook_failure_mails SET last_sent_at = last_sent_at - interval '61 minutes'
                      WHERE endpoint_id = ${endpointId}`),
    );
    expect(await sendHeldFailureMails(t.app.atrium)).toBeGreaterThan(0);
    const sent = (await mails()).slice(before);
    const recipients = sent.flatMap((m) => m.to).sort();
    // Every current admin once (they held back the same count since the same e-mail, or not: one e-mail each
    // group); the demoted one not at all.
    expect(new Set(recipients).size).toBe(recipients.length);
    expect(recipients).toContain(ws.admin.email.toLowerCase());
    expect(recipients).toContain(second.email.toLowerCase());
    expect(recipients).not.toContain(gone.email.toLowerCase());
    for (const mail of sent) {
      expect(mail.subject).toBe('Webhook deliveries failed: 1 more event to 93.184.216.34');
      expect(mail.text).toContain('93.184.216.34/hooks/atrium?… ("Billing system")');
      expect(mail.text).toContain(`${t.app.atrium.selfUrl()}/admin/webhooks/${endpointId}`);
      expect(mail.text).not.toContain('s3cret');
    }
    // Recorded as sent: a second sweep sends nothing, and the next dead letter waits for the next hour.
    expect(await sendHeldFailureMails(t.app.atrium)).toBe(0);
    const held = await withSystem(t.database.db, (tx) =>
      queryRows<{ held: number }>(tx, sql`SELECT held FROM webhook_failure_mails WHERE endpoint_id = ${endpointId}`),
    );
    expect(held.map((r) => Number(r.held))).toEqual(held.map(() => 0));
    await deadLetter(events[0]);
    expect(await mails()).toHaveLength(before + sent.length);
  });

  it('one sweep over two workspaces mails each its own admins about its own endpoint', async () => {
    const other = await createWorkspace(t, { tier: 'advanced' });
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/admin/webhooks',
      token: other.admin.token,
      payload: { url: 'https://93.184.216.35/other-hooks', description: 'Other clinic' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const otherEndpoint = created.json().id;
    await withSystem(t.database.db, async (tx) => {
      for (const [workspace, endpoint, recipient] of [
        [ws.id, endpointId, ws.admin.email.toLowerCase()],
        [other.id, otherEndpoint, other.admin.email.toLowerCase()],
      ]) {
        await tx.execute(sql`INSERT INTO webhook_failure_mails (workspace_id, endpoint_id, recipient, last_sent_at, held)
          VALUES (${workspace}, ${endpoint}, ${recipient}, now() - interval '2 hours', 2)
          ON CONFLICT (workspace_id, endpoint_id, recipient) DO UPDATE SET last_sent_at = EXCLUDED.last_sent_at, held = 2`);
      }
    });
    const before = (await mails()).length;
    await sendHeldFailureMails(t.app.atrium);
    const mine = (await mails()).slice(before);
    expect(mine.map((m) => m.to)).toEqual([[ws.admin.email.toLowerCase()]]);
    expect(mine[0].text).toContain('93.184.216.34/hooks/atrium');
    const theirs = await withSystem(t.database.db, (tx) =>
      queryRows<{ payload: { to: string[]; text: string } }>(
        tx,
        sql`SELECT payload FROM jobs WHERE type = 'mail.send' AND workspace_id = ${other.id} ORDER BY id`,
      ),
    );
    expect(theirs.map((r) => r.payload.to)).toEqual([[other.admin.email.toLowerCase()]]);
    expect(theirs[0].payload.text).toContain('93.184.216.35/other-hooks');
    expect(theirs[0].payload.text).not.toContain('93.184.216.34');
  });

  it("forgets an endpoint's e-mail window when the endpoint is deleted", async () => {
    const res = await t.request({
      method: 'DELETE',
      url: `/api/v1/admin/webhooks/${endpointId}`,
      token: ws.admin.token,
    });
    expect(res.statusCode).toBe(204);
    const left = await withSystem(t.database.db, (tx) =>
      queryRows(tx, sql`SELECT 1 FROM webhook_failure_mails WHERE endpoint_id = ${endpointId}`),
    );
    expect(left).toEqual([]);
  });
});
