// Delivery end to end against real local HTTPS receivers (trusted via NODE_EXTRA_CA_CERTS).
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  createPatient,
  createWorkspace,
  setTier,
  type TestWorkspace,
  waitForMail,
} from '../../../test/helpers/factories.js';
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver } from '../../../test/helpers/https-receiver.js';
import { unusedPort } from '../../../test/helpers/ports.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { closeSafeClient } from '../../platform/http/safe-client.js';
import { verifySignedRequest } from '../../platform/signing.js';
import type { Background } from '../../workers.js';
import { DEFAULT_PER_ENDPOINT, startWebhookWorker } from './jobs/delivery-worker.js';
import { secretKeys } from './service.js';

const RETRIES = [150, 300];
let t: TestApp;
let ws: TestWorkspace;
let receiver: HttpsReceiver;
let background: Background;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  if (!process.env.NODE_EXTRA_CA_CERTS) throw new Error('Run with NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem');
  t = await createTestApp({ webhooks: { retryDelaysMs: RETRIES, timeoutMs: 2000, allowCidrs: ['127.0.0.0/8'] } });
  ws = await createWorkspace(t, { tier: 'advanced' });
  receiver = await startHttpsReceiver();
  background = await t.startBackground();
});
afterEach(() => {
  receiver.requests.length = 0;
  receiver.respondWith({ status: 200, body: 'ok' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([receiver, ...receivers].map((r) => r?.close()));
  await closeSafeClient();
});

async function newReceiver(opts: Parameters<typeof startHttpsReceiver>[0] = {}) {
  const r = await startHttpsReceiver(opts);
  receivers.push(r);
  return r;
}

async function createEndpoint(url: string, extra: Record<string, unknown> = {}, owner = ws) {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/admin/webhooks',
    token: owner.admin.token,
    payload: { url, ...extra },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

async function deliveries(endpointId: string, query = '', owner = ws) {
  const res = await t.request({
    method: 'GET',
    url: `/api/v1/admin/webhooks/${endpointId}/deliveries${query}`,
    token: owner.admin.token,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    items: {
      id: string;
      eventId: string;
      attempt: number;
      outcome: string;
      status: number | null;
      error: string | null;
      nextAttemptAt: string | null;
    }[];
    nextCursor: string | null;
  };
}

/**
 * Runs `body` with a delivery worker of its own (options over the app's webhook settings, a 50 ms
 * poll) in place of the background one, which is restarted afterwards.
 */
async function withWorker(
  options: { timeoutMs: number; maxInFlight?: number; perEndpoint?: number; log?: FastifyBaseLogger },
  body: () => Promise<void>,
): Promise<void> {
  await background.stop();
  const { timeoutMs, log, ...slots } = options;
  const worker = await startWebhookWorker({
    deps: t.app.atrium,
    log: log ?? t.app.log,
    webhooks: { ...t.config.webhooks, timeoutMs },
    keys: secretKeys(t.app.atrium),
    pollMs: 50,
    ...slots,
  });
  try {
    await body();
  } finally {
    await worker.stop();
    background = await t.startBackground();
  }
}

async function waitUntil<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const deliveryState = async (endpointId: string, eventId?: string) => {
  const rows = await withSystem(t.database.db, (tx) =>
    queryRows<{ state: string; attempts: number; event_id: string }>(
      tx,
      sql`SELECT state, attempts, event_id FROM webhook_deliveries
           WHERE endpoint_id = ${endpointId} ${eventId ? sql`AND event_id = ${eventId}` : sql``}`,
    ),
  );
  return rows;
};

const verify = (secret: string, req: ReceivedRequest) => new Webhook(secret).verify(req.body, req.headers);

describe('signed delivery', () => {
  it('delivers the event body signed so that the standardwebhooks package verifies it', async () => {
    const endpoint = await createEndpoint(`${receiver.url}/hooks/atrium`);
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Grace' });
    const [req] = await receiver.waitFor(1);
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hooks/atrium');
    expect(req.headers['content-type']).toBe('application/json');

    const payload = verify(endpoint.secret, req) as Record<string, unknown>;
    expect(payload).toMatchObject({
      type: 'patient.created',
      workspace_id: ws.id,
      data: { patient: { id: patient.id, givenName: 'Grace' } },
    });
    expect(Object.keys(JSON.parse(req.body))).toEqual(['event_id', 'type', 'created_at', 'workspace_id', 'data']);
    expect(payload.event_id).toMatch(/^evt_/);
    expect(req.headers['webhook-id']).toBe(payload.event_id);
    // Our headers carry the same values as the Standard Webhooks ones.
    expect(req.headers['x-service-signature']).toBe(req.headers['webhook-signature']);
    expect(req.headers['x-service-timestamp']).toBe(req.headers['webhook-timestamp']);
    expect(Math.abs(Number(req.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, req)).toThrow();
    expect(verifySignedRequest(endpoint.secret, req.headers, `${req.body} `).ok).toBe(false);

    const log = await waitUntil(async () => {
      const page = await deliveries(endpoint.id);
      return page.items.length === 1 && page;
    }, 'the attempt row');
    expect(log.items[0]).toMatchObject({
      eventId: payload.event_id,
      attempt: 1,
      outcome: 'success',
      status: 200,
      error: null,
      nextAttemptAt: null,
    });
    expect(log.items[0].id).toMatch(/^dlv_/);
    expect(await deliveryState(endpoint.id)).toEqual([expect.objectContaining({ state: 'delivered', attempts: 1 })]);
    await t.request({ method: 'DELETE', url: `/api/v1/admin/webhooks/${endpoint.id}`, token: ws.admin.token });
  });

  it('signs with both secrets for 24 h after a rotation', async () => {
    const endpoint = await createEndpoint(receiver.url);
    const rotated = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpoint.id}/rotate-secret`,
      token: ws.admin.token,
    });
    const newSecret = rotated.json().secret as string;
    await createPatient(t, ws.admin.token);
    const [req] = await receiver.waitFor(1);
    const signatures = req.headers['webhook-signature'].split(' ');
    expect(signatures).toHaveLength(2);
    expect(req.headers['x-service-signature']).toBe(req.headers['webhook-signature']);
    expect(verify(newSecret, req)).toBeTruthy();
    expect(verify(endpoint.secret, req)).toBeTruthy();
    await t.request({ method: 'DELETE', url: `/api/v1/admin/webhooks/${endpoint.id}`, token: ws.admin.token });
  });
});

describe('failures, retries and dead-letter', () => {
  async function failingCase(url: string, expectError: RegExp, expectStatus: number | null) {
    // A workspace of its own, so no other test's events reach this endpoint.
    const owner = await createWorkspace(t, { tier: 'advanced' });
    const endpoint = await createEndpoint(url, {}, owner);
    await createPatient(t, owner.admin.token);
    const total = RETRIES.length + 1;
    const page = await waitUntil(async () => {
      const p = await deliveries(endpoint.id, '', owner);
      return p.items.length === total && p;
    }, `${total} attempts to ${url}`);
    // Newest first: the last attempt ends the budget, the earlier ones scheduled a retry.
    expect(page.items.map((a) => a.attempt)).toEqual([3, 2, 1]);
    for (const attempt of page.items) {
      expect(attempt.outcome).toBe('fail');
      expect(attempt.status).toBe(expectStatus);
      expect(attempt.error).toMatch(expectError);
    }
    expect(page.items[0].nextAttemptAt).toBeNull();
    expect(page.items[2].nextAttemptAt).not.toBeNull();
    const [state] = await waitUntil(async () => {
      const rows = await deliveryState(endpoint.id);
      return rows[0]?.state === 'dead' && rows;
    }, 'dead-letter');
    return { endpoint, eventId: state.event_id, owner };
  }

  it('retries a 5xx on the schedule, then dead-letters into the inbox and e-mails the admins', async () => {
    receiver.respondWith({ status: 503, body: 'down for maintenance' });
    const { endpoint, eventId, owner } = await failingCase(receiver.url, /^HTTP 503: down for maintenance/, 503);
    expect(receiver.requests).toHaveLength(3);
    // The same event id and body on every retry: the receiver's deduplication key.
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1);
    const gaps = receiver.requests
      .slice(1)
      .map((r, i) => r.receivedAt.getTime() - receiver.requests[i].receivedAt.getTime());
    // Retries wait at least their scheduled delay.
    for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(RETRIES[i] - 20);

    const inbox = await t.request({ method: 'GET', url: '/api/v1/inbox', token: owner.admin.token });
    expect(inbox.statusCode).toBe(200);
    expect(inbox.json().items).toContainEqual(
      expect.objectContaining({
        kind: 'webhook.dead_lettered',
        endpointId: endpoint.id,
        eventId,
        eventType: 'patient.created',
        lastStatus: 503,
      }),
    );
    // The admin's mailbox also holds the welcome e-mail the operator's workspace creation sent (in no set order):
    // the dead letter's is looked for, not taken to be the first.
    await expect
      .poll(
        async () => (await waitForMail(t, owner.admin.email, 1, 200)).find((m) => m.text.includes(eventId))?.subject,
        {
          timeout: 10_000,
        },
      )
      .toMatch(/Webhook delivery failed/);

    // Replay: a fresh budget; this time the endpoint is healthy.
    receiver.requests.length = 0;
    receiver.respondWith({ status: 204 });
    const replay = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpoint.id}/replay/${eventId}`,
      token: owner.admin.token,
    });
    expect(replay.statusCode, replay.body).toBe(202);
    expect(replay.json()).toEqual({ eventId, state: 'pending' });
    const [again] = await receiver.waitFor(1);
    expect(again.headers['webhook-id']).toBe(eventId);
    expect(verify(endpoint.secret, again)).toBeTruthy();
    const page = await waitUntil(async () => {
      const p = await deliveries(endpoint.id, '', owner);
      return p.items.length === 4 && p;
    }, 'the replayed attempt');
    expect(page.items[0]).toMatchObject({ attempt: 1, outcome: 'success', status: 204, eventId });
    await waitUntil(async () => (await deliveryState(endpoint.id))[0]?.state === 'delivered', 'delivered');
    await t.request({ method: 'DELETE', url: `/api/v1/admin/webhooks/${endpoint.id}`, token: owner.admin.token });
  });

  it('holds deliveries while the workspace is below Advanced and resumes them after an upgrade', async () => {
    const owner = await createWorkspace(t, { tier: 'advanced' });
    const target = await newReceiver();
    let calls = 0;
    target.respondWith(() => ({ status: ++calls === 1 ? 503 : 200 }));
    await createEndpoint(target.url, {}, owner);
    await createPatient(t, owner.admin.token);
    await target.waitFor(1);
    await setTier(t, owner.id, 'standard');
    await new Promise((r) => setTimeout(r, RETRIES[0] * 4));
    expect(target.requests).toHaveLength(1);
    await setTier(t, owner.id, 'advanced');
    await target.waitFor(2);
    expect(calls).toBe(2);
  });

  it('holds a disabled endpoint’s pending deliveries without using attempts, and sends them once it is enabled', async () => {
    const owner = await createWorkspace(t, { tier: 'advanced' });
    const target = await newReceiver();
    let calls = 0;
    target.respondWith(() => ({ status: ++calls === 1 ? 503 : 200 }));
    const endpoint = await createEndpoint(target.url, {}, owner);
    await createPatient(t, owner.admin.token);
    await target.waitFor(1);
    const patch = (enabled: boolean) =>
      t.request({
        method: 'PATCH',
        url: `/api/v1/admin/webhooks/${endpoint.id}`,
        token: owner.admin.token,
        payload: { enabled },
      });
    expect((await patch(false)).statusCode).toBe(200);
    // Well past the retry's due time: it waits, using no attempt.
    await new Promise((r) => setTimeout(r, RETRIES[0] * 4));
    expect(target.requests).toHaveLength(1);
    expect(await deliveryState(endpoint.id)).toMatchObject([{ state: 'pending', attempts: 1 }]);
    const [job] = await withSystem(t.database.db, (tx) =>
      queryRows<{ status: string; attempts: number }>(
        tx,
        sql`SELECT status, attempts FROM jobs WHERE type = 'webhooks.deliver' AND concurrency_key = ${endpoint.id}`,
      ),
    );
    expect(job).toEqual({ status: 'queued', attempts: 1 });
    expect((await patch(true)).statusCode).toBe(200);
    await target.waitFor(2);
    await waitUntil(async () => (await deliveryState(endpoint.id))[0]?.state === 'delivered', 'delivered');
    expect((await deliveries(endpoint.id, '', owner)).items.map((a) => a.attempt)).toEqual([2, 1]);
  });

  it('treats a 3xx as a failure and never follows the redirect', async () => {
    const target = await newReceiver();
    receiver.respondWith({ status: 302, headers: { location: `${target.url}/stolen` } });
    await failingCase(receiver.url, /^redirect not followed \(HTTP 302/, 302);
    expect(target.requests).toHaveLength(0);
  });

  it("logs a failed attempt without the receiver's words or its redirect target (contract §1); the admin still sees them", async () => {
    // A logger that keeps every line as a log shipper would receive it (errors with their message and stack).
    const lines: string[] = [];
    const capture =
      (level: string) =>
      (first: unknown, ...rest: unknown[]) => {
        lines.push(
          `${level} ${JSON.stringify([first, ...rest], (_k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v))}`,
        );
      };
    const log = {
      level: 'trace',
      ...Object.fromEntries(['fatal', 'error', 'warn', 'info', 'debug', 'trace'].map((l) => [l, capture(l)])),
      silent: () => {},
      child: () => log,
    } as unknown as FastifyBaseLogger;
    await withWorker({ timeoutMs: 2000, log }, async () => {
      receiver.respondWith({ status: 500, body: 'Chart of Maria Lopez, born 1980-02-03, not accepted' });
      await failingCase(receiver.url, /^HTTP 500: Chart of Maria Lopez/, 500);
      receiver.respondWith({
        status: 302,
        headers: { location: 'https://elsewhere.example/cb?token=tok-8d1f-secret' },
      });
      await failingCase(receiver.url, /^redirect not followed \(HTTP 302 to https:\/\/elsewhere/, 302);
    });
    const logged = lines.join('\n');
    expect(logged).toContain('HTTP 500');
    expect(logged).toContain('HTTP 302');
    expect(logged).not.toContain('Maria Lopez');
    expect(logged).not.toContain('tok-8d1f-secret');
  });

  it('treats a 4xx as a failure', async () => {
    receiver.respondWith({ status: 410, body: 'gone' });
    await failingCase(receiver.url, /^HTTP 410/, 410);
  });

  it('times out a slow receiver', async () => {
    const slow = await newReceiver({ response: { status: 200, delayMs: 1500 } });
    // A worker with a short timeout, so three attempts take well under a second rather than three timeouts of 2 s.
    await withWorker({ timeoutMs: 200 }, async () => {
      await failingCase(slow.url, /^timeout:/, null);
    });
  });

  it('fails on connection refused', async () => {
    await failingCase(`https://127.0.0.1:${await unusedPort()}/hook`, /^connection:/, null);
  });

  it('fails on a certificate nobody trusts', async () => {
    const untrusted = await newReceiver({ tls: 'untrusted' });
    await failingCase(untrusted.url, /^tls:/, null);
    expect(untrusted.requests).toHaveLength(0);
  });

  it('re-checks the URL rules at every attempt', async () => {
    // Allowed when stored (loopback is allow-listed here); a worker without the allow-list refuses it.
    const owner = await createWorkspace(t, { tier: 'advanced' });
    const endpoint = await createEndpoint(receiver.url, { events: ['claim.submitted'] }, owner);
    const strict = await startWebhookWorker({
      deps: t.app.atrium,
      log: t.app.log,
      webhooks: { retryDelaysMs: [], timeoutMs: 1000, allowCidrs: [] },
      keys: secretKeys(t.app.atrium),
      pollMs: 50,
    });
    await background.stop();
    try {
      const patient = await createPatient(t, owner.admin.token);
      await t.request({
        method: 'POST',
        url: '/api/v1/claims',
        token: owner.admin.token,
        payload: { patientId: patient.id, payer: 'Acme', amountCents: 1000 },
      });
      const page = await waitUntil(async () => {
        const p = await deliveries(endpoint.id, '', owner);
        return p.items.length === 1 && p;
      }, 'the refused attempt');
      expect(page.items[0]).toMatchObject({ outcome: 'fail', status: null });
      expect(page.items[0].error).toMatch(/^unsafe_url \(blocked_address\)/);
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await strict.stop();
      background = await t.startBackground();
    }
  });
});

describe('delivery log', () => {
  it('pages newest first with a cursor and filters by outcome or HTTP status', async () => {
    const owner = await createWorkspace(t, { tier: 'enterprise' });
    let n = 0;
    const r = await newReceiver({ response: () => ({ status: n++ % 2 === 0 ? 200 : 500 }) });
    const endpoint = await createEndpoint(r.url, { events: ['patient.created'] }, owner);
    for (let i = 0; i < 5; i++) await createPatient(t, owner.admin.token);
    // 5 events; the odd-numbered requests fail and are retried until they succeed or die.
    await waitUntil(async () => {
      const rows = await deliveryState(endpoint.id);
      return rows.length === 5 && rows.every((row) => row.state !== 'pending');
    }, 'all settled');
    const all = await deliveries(endpoint.id, '?limit=200', owner);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await deliveries(endpoint.id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`, owner);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((a) => a.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.items.map((a) => a.id));
    expect([...seen].sort().reverse()).toEqual(seen);
    const failed = await deliveries(endpoint.id, '?status=fail', owner);
    expect(failed.items.length).toBeGreaterThan(0);
    expect(failed.items.every((a) => a.outcome === 'fail')).toBe(true);
    const by500 = await deliveries(endpoint.id, '?status=500', owner);
    expect(by500.items.map((a) => a.id)).toEqual(failed.items.map((a) => a.id));
    const ok = await deliveries(endpoint.id, '?status=success', owner);
    expect(ok.items.length + failed.items.length).toBe(all.items.length);
  });
});

describe('isolation between endpoints and crash safety', () => {
  it('does not let a slow endpoint delay another one', async () => {
    const owner = await createWorkspace(t, { tier: 'enterprise' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let concurrent = 0;
    let maxConcurrent = 0;
    // The slow endpoint holds every request until the fast one has received all its events.
    const slow = await newReceiver({
      response: async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await gate;
        concurrent--;
        return { status: 200 };
      },
    });
    const fast = await newReceiver();
    await createEndpoint(slow.url, {}, owner);
    await createEndpoint(fast.url, {}, owner);
    // A worker with a generous timeout, so held requests never time out and get retried.
    await withWorker({ timeoutMs: 60_000 }, async () => {
      try {
        const events = DEFAULT_PER_ENDPOINT + 20;
        for (let i = 0; i < events; i++) await createPatient(t, owner.admin.token);
        await fast.waitFor(events, 20_000);
        // Meanwhile the slow endpoint got no more than its cap of concurrent requests.
        expect(slow.requests.length).toBe(DEFAULT_PER_ENDPOINT);
        expect(maxConcurrent).toBe(DEFAULT_PER_ENDPOINT);
        release();
        await slow.waitFor(events, 20_000);
      } finally {
        release(); // before the worker stops: it waits for its requests in flight
      }
    });
  });

  it('shares a process’s slots fairly, so several slow endpoints cannot starve a fast one', async () => {
    const owner = await createWorkspace(t, { tier: 'enterprise' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = async () => {
      await gate;
      return { status: 200 };
    };
    const slowA = await newReceiver({ response: held });
    const slowB = await newReceiver({ response: held });
    const fast = await newReceiver();
    await createEndpoint(slowA.url, {}, owner);
    await createEndpoint(slowB.url, {}, owner);
    await createEndpoint(fast.url, {}, owner);
    // Earlier tests leave endpoints whose retries fall due later (some at receivers that hang): with
    // only eight slots they would take this test's slots at random moments. Only these three count here.
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE webhook_endpoints SET enabled = false WHERE workspace_id <> ${owner.id}`),
    );
    // Eight slots for the whole process; without a fair share the two slow endpoints would hold them all.
    await withWorker({ timeoutMs: 60_000, maxInFlight: 8, perEndpoint: 8 }, async () => {
      try {
        const events = 12;
        for (let i = 0; i < events; i++) await createPatient(t, owner.admin.token);
        await fast.waitFor(events, 15_000);
        // Each slow endpoint holds at most 8 / (busy + 1) = 2 (busy counted with or without the fast one).
        expect(slowA.requests.length + slowB.requests.length).toBeLessThanOrEqual(4);
        release();
        await slowA.waitFor(events, 20_000);
        await slowB.waitFor(events, 20_000);
      } finally {
        release(); // before the worker stops: it waits for its requests in flight
      }
    });
  });

  it('picks up a crashed worker’s claimed deliveries after the lease expires', async () => {
    const owner = await createWorkspace(t, { tier: 'enterprise' });
    const r = await newReceiver();
    const endpoint = await createEndpoint(r.url, {}, owner);
    await background.stop();
    try {
      const patient = await createPatient(t, owner.admin.token);
      // What a worker that died right after claiming leaves behind: a committed claim, no result.
      const claimed = await withSystem(t.database.db, (tx) =>
        queryRows<{ id: string }>(
          tx,
          sql`UPDATE jobs SET status = 'running', attempts = attempts + 1, claimed_by = 'crashed-worker/1',
                              lease_until = now() + interval '700 milliseconds'
               WHERE type = 'webhooks.deliver' AND concurrency_key = ${endpoint.id} AND status = 'queued'
              RETURNING id`,
        ),
      );
      expect(claimed).toHaveLength(1);
      background = await t.startBackground();
      const [req] = await r.waitFor(1, 10_000);
      expect(JSON.parse(req.body).data.patient.id).toBe(patient.id);
      await waitUntil(async () => (await deliveryState(endpoint.id))[0]?.state === 'delivered', 'delivered');
      // The lost claim used up no retry: the delivery that went out is attempt 1.
      const log = await deliveries(endpoint.id, '', owner);
      expect(log.items.map((a) => a.attempt)).toEqual([1]);
    } catch (err) {
      background = await t.startBackground();
      throw err;
    }
  });

  it('delivers everything when a worker dies mid-request; its late result is fenced out', async () => {
    const owner = await createWorkspace(t, { tier: 'enterprise' });
    let first = true;
    const r = await newReceiver({
      response: () => {
        if (!first) return { status: 200 };
        first = false;
        return { status: 200, delayMs: 1500 };
      },
    });
    const endpoint = await createEndpoint(r.url, { events: ['patient.created'] }, owner);
    await background.stop();
    // Its first request hangs; meanwhile its lease runs out, as if the process had frozen (a live
    // process renews the lease every leaseMs / 3, so the test ends the lease in the database).
    const doomed = await startWebhookWorker({
      deps: t.app.atrium,
      log: t.app.log,
      webhooks: t.config.webhooks,
      keys: secretKeys(t.app.atrium),
      pollMs: 50,
      leaseMs: 30_000,
    });
    const patient = await createPatient(t, owner.admin.token);
    await r.waitFor(1);
    // It stops claiming; its hanging request finishes later, after another worker took over.
    const stopping = doomed.stop();
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE jobs SET lease_until = now() - interval '1 second'
                      WHERE type = 'webhooks.deliver' AND concurrency_key = ${endpoint.id} AND status = 'running'`),
    );
    background = await t.startBackground();
    const requests = await r.waitFor(2, 10_000);
    await stopping;
    expect(requests.every((q) => JSON.parse(q.body).data.patient.id === patient.id)).toBe(true);
    expect(requests[0].headers['webhook-id']).toBe(requests[1].headers['webhook-id']);
    await waitUntil(async () => (await deliveryState(endpoint.id))[0]?.state === 'delivered', 'delivered');
    const page = await waitUntil(async () => {
      const p = await deliveries(endpoint.id, '', owner);
      return p.items.length === 2 && p;
    }, 'both attempts logged');
    expect(page.items.every((a) => a.outcome === 'success')).toBe(true);
  });
});
