// Health monitoring (contract §9): the cron endpoints run every probe and answer health+json;
// probes see faults in their emulators; 3 failing runs open an incident and 2 runs without a failure close it,
// with exactly one e-mail each way; the RLS probe names a tenant table without RLS. (What counts against an
// acceptance rate: acceptance.test.ts.)
import { eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { addMember, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { countAccepted, countRefused, flushAcceptance, measureAcceptance } from '../../platform/acceptance.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { runDueJobs } from '../../platform/jobs/index.js';
import { sendMailJob } from '../../platform/mail/mailer.js';
import type { DependencyProbe } from '../../platform/module.js';
import { recordRun, sweep } from './monitor.js';
import { healthIncidents } from './tables.js';

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;
const ONCALL = 'oncall@clinic.example';

const cron = (path = 'services-health', token: string | null = t.config.cronSecret ?? null) =>
  t.request({ method: 'GET', url: `/api/v1/cron/${path}`, headers: token ? { authorization: `Bearer ${token}` } : {} });

type Checks = Record<string, { status: string; output?: string; observedValue: unknown }[]>;

async function alerts(): Promise<{ subject: string }[]> {
  await runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [sendMailJob] });
  const res = await fetch(`${t.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(ONCALL)}`);
  return ((await res.json()) as { items: { subject: string }[] }).items;
}

beforeAll(async () => {
  t = await createTestApp({ adminAlertEmails: [ONCALL] });
  // Advanced: their admins can read the workspace inbox.
  ws = await createWorkspace(t, { tier: 'advanced' });
  other = await createWorkspace(t, { tier: 'advanced' });
  // Only `ws` uses Google Calendar: a Google incident shows a banner there and nowhere else.
  await connectCalendar(t, ws.admin.token, 'google', `banner-${ws.id}@google.example`);
}, 60_000);
afterAll(async () => t?.close());

describe('cron endpoints', () => {
  it('need the cron secret or the operator token', async () => {
    expect((await cron('services-health', null)).statusCode).toBe(401);
    expect((await cron('services-health', 'wrong-secret')).statusCode).toBe(401);
    // Accepted (200 or 503 is the probes' verdict, not the credential's).
    expect((await cron('services-health', t.config.operatorToken)).statusCode).not.toBe(401);
  });

  it('answer application/health+json with every probe, passing against healthy emulators', async () => {
    const res = await cron();
    expect(res.headers['content-type']).toContain('application/health+json');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { status: string; checks: Checks };
    expect(Object.keys(body.checks).sort()).toEqual(
      [
        'database:reachability',
        'database:replication-lag',
        'database:rls-policies',
        'oauth-google:token-refresh',
        'oauth-microsoft:token-refresh',
        'oauth-zoom:token-refresh',
        'video:relay-reachability',
        'video:room-creation',
        'mail:acceptance-rate',
        'sms:acceptance-rate',
        'chat-telegram:acceptance-rate',
        'chat-whatsapp:acceptance-rate',
        'chat-messenger:acceptance-rate',
        'chat-instagram:acceptance-rate',
        'chat-viber:acceptance-rate',
        'ai:latency',
        'ai:error-rate',
        'ai:fallback',
        'oauth-meta:token-refresh',
        'storage:write',
        'payments:checkout',
        'payments:webhook-ingress',
        'tts:latency',
        'tts:error-rate',
        'tts:fallback',
      ].sort(),
    );
    for (const [id, [check]] of Object.entries(body.checks))
      expect(check.status, `${id}: ${check.output}`).not.toBe('fail');
    expect(body.checks['video:relay-reachability'][0].output).toMatch(/mapped us to 127\.0\.0\.1/);
    const nightly = await cron('chain-health-nightly');
    expect((nightly.json() as { checks: Checks }).checks['video:room-creation'][0].output).toBe(
      'created and ended a room',
    );
    // The nightly run refreshes a real connection's token (Google: the workspace connected above),
    // audited in that workspace like any refresh; without a connection it checks the endpoint as usual.
    const checks = (nightly.json() as { checks: Checks }).checks;
    expect(checks['oauth-google:token-refresh'][0]).toMatchObject({
      status: 'pass',
      output: "refreshed a real connection's token",
    });
    expect(checks['oauth-microsoft:token-refresh'][0].output).toBe('answered 400 invalid_grant as expected');
    const audit = (
      await t.request({ method: 'GET', url: '/api/v1/audit?kind=token_access', token: ws.admin.token })
    ).json().items as { reason?: string; outcome?: string }[];
    expect(audit.some((a) => a.reason === 'health.refresh')).toBe(true);
  });
});

describe('probes see failures', () => {
  it('the RLS probe names a tenant table created without RLS', async () => {
    // As the owner, the way a careless migration would (the app's own roles cannot create tables).
    const owner = async (statement: string) => {
      if (t.testDb.url) {
        const client = new pg.Client({ connectionString: t.testDb.url });
        await client.connect();
        await client.query(statement).finally(() => client.end());
      } else {
        // PGlite: one connection, whose session user owns the schema.
        await t.app.atrium.db.execute(sql`RESET ROLE`);
        try {
          await t.app.atrium.db.execute(sql.raw(statement));
        } finally {
          await t.app.atrium.db.execute(sql`SET ROLE atrium_app`);
        }
      }
    };
    await owner('CREATE TABLE probe_without_rls (workspace_id text, note text)');
    try {
      const res = await cron();
      expect(res.statusCode).toBe(503);
      const [check] = (res.json() as { checks: Checks }).checks['database:rls-policies'];
      expect(check).toMatchObject({ status: 'fail', observedValue: 1, observedUnit: 'tables out of policy' });
      expect(check.output).toContain('probe_without_rls');
    } finally {
      await owner('DROP TABLE probe_without_rls');
    }
  });

  it('a STUN relay that does not answer, or refuses, fails its probe', async () => {
    for (const fault of [{ delayMs: 1 }, { status: 500 }]) {
      await t.request({
        method: 'POST',
        url: '/_emulators/video/faults',
        payload: { operation: 'stun.binding', ...fault, times: 50 },
      });
      const body = (await cron()).json() as { checks: Checks };
      await t.request({ method: 'DELETE', url: '/_emulators/video/faults' });
      expect(body.checks['video:relay-reachability'][0].status, JSON.stringify(fault)).toBe('fail');
    }
  });
});

describe('acceptance rates', () => {
  it('sum what every instance counted in the last interval', async () => {
    // Another instance's counters (its own deps object), flushed to the same database.
    const otherInstance = { db: t.app.atrium.db, config: t.app.atrium.config };
    // Refusals from the provider's fleet: three client networks over the two instances.
    for (let i = 0; i < 3; i++) countRefused(otherInstance, 'test:source', '198.51.100.7');
    await flushAcceptance(otherInstance);
    countAccepted(t.app.atrium, 'test:source');
    countRefused(t.app.atrium, 'test:source', '198.51.100.8');
    countRefused(t.app.atrium, 'test:source', '2001:db8::8');
    expect(await measureAcceptance(t.app.atrium, 'test:source', 60_000)).toMatchObject({
      status: 'fail',
      observedValue: 16.7,
      output: '1 accepted, 5 refused in the last 60 s',
    });
  });
});

describe('each probe sees its dependency fail', () => {
  it.each([
    ['oauth-microsoft:token-refresh', 'microsoft', 'token'],
    ['oauth-zoom:token-refresh', 'zoom', 'token'],
    ['oauth-meta:token-refresh', 'meta', 'token'],
    ['payments:checkout', 'payments', 'sessions.create'],
    ['tts:fallback', 'tts', 'fallback.speech'],
    ['ai:latency', 'ai', 'chat.completions'],
    ['ai:fallback', 'ai', 'fallback.chat.completions'],
  ])('%s fails while the %s emulator answers 503 to %s', async (probe, emulator, operation) => {
    await t.request({
      method: 'POST',
      url: `/_emulators/${emulator}/faults`,
      payload: { operation, status: 503, times: 1 },
    });
    const [check] = ((await cron()).json() as { checks: Checks }).checks[probe];
    await t.request({ method: 'DELETE', url: `/_emulators/${emulator}/faults` });
    expect(check.status, JSON.stringify(check)).toBe('fail');
  });
});

describe("token probes pass only on the provider's well-formed refusal", () => {
  const probeWith = async (emulator: string, fault: Record<string, unknown>) => {
    await t.request({
      method: 'POST',
      url: `/_emulators/${emulator}/faults`,
      payload: { operation: 'token', times: 1, ...fault },
    });
    const probe = emulator === 'meta' ? 'oauth-meta:token-refresh' : `oauth-${emulator}:token-refresh`;
    const [check] = ((await cron()).json() as { checks: Checks }).checks[probe];
    await t.request({ method: 'DELETE', url: `/_emulators/${emulator}/faults` });
    // A passing run between, so these runs never add up to an incident (the incident tests count on none).
    await cron();
    return check;
  };

  it('healthy: 400 invalid_grant (Google, Microsoft) and 400 OAuthException 190 (Meta)', async () => {
    const { checks } = (await cron()).json() as { checks: Checks };
    for (const id of ['oauth-google:token-refresh', 'oauth-microsoft:token-refresh'])
      expect(checks[id][0]).toMatchObject({ status: 'pass', output: 'answered 400 invalid_grant as expected' });
    expect(checks['oauth-meta:token-refresh'][0]).toMatchObject({
      status: 'pass',
      output: 'answered 400 OAuthException code 190 as expected',
    });
  });

  it.each([
    ['google', 429],
    ['google', 401],
    ['google', 403],
    ['google', 500],
    ['microsoft', 429],
    ['microsoft', 401],
    ['microsoft', 403],
  ])('oauth-%s:token-refresh fails while the token endpoint answers %i', async (emulator, status) => {
    const check = await probeWith(emulator, { status });
    expect(check, JSON.stringify(check)).toMatchObject({ status: 'fail', observedValue: status });
  });

  it.each([
    ['another OAuth error', { error: 'invalid_request' }],
    ['a body that is no OAuth error', 'Bad Request'],
  ])('oauth-google:token-refresh fails on a 400 with %s', async (_what, body) => {
    const check = await probeWith('google', { status: 400, body });
    expect(check, JSON.stringify(check)).toMatchObject({ status: 'fail', observedValue: 400 });
  });

  it.each([429, 401, 403, 400])(
    'oauth-meta:token-refresh fails while Graph answers %i with a temporary OAuthException (code 2)',
    async (status) => {
      const check = await probeWith('meta', { status });
      expect(check, JSON.stringify(check)).toMatchObject({ status: 'fail', observedValue: status });
    },
  );
});

describe('incidents', () => {
  it('3 failing runs open one incident (one e-mail); 2 passing runs close it (one e-mail)', async () => {
    await t.request({
      method: 'POST',
      url: '/_emulators/google/faults',
      payload: { operation: 'token', status: 503, times: 4 },
    });
    for (let run = 0; run < 4; run++) await cron();
    const opened = (await alerts()).filter((m) => m.subject.includes('oauth-google'));
    expect(opened.map((m) => m.subject)).toEqual(['[Atrium] Incident: oauth-google is failing']);
    const admin = await t.request({ method: 'GET', url: '/api/v1/integrations/chain-health', token: ws.admin.token });
    expect(admin.statusCode).toBe(200);
    expect(admin.json().incidents[0]).toMatchObject({ component: 'oauth-google', status: 'open' });
    const google = admin.json().components.find((c: { name: string }) => c.name === 'oauth-google:token-refresh');
    expect(google.status).toBe('fail');
    expect(google.history.length).toBeGreaterThanOrEqual(4);
    const bannersOf = async (w: TestWorkspace) =>
      (await t.request({ method: 'GET', url: '/api/v1/health/banners', token: w.admin.token })).json().items;
    expect(await bannersOf(ws)).toEqual([
      expect.objectContaining({
        feature: 'calendar-google',
        status: 'down',
        message: expect.stringContaining('Google Calendar'),
      }),
    ]);
    expect(await bannersOf(other)).toEqual([]);
    const inboxOf = async (w: TestWorkspace) =>
      (await t.request({ method: 'GET', url: '/api/v1/inbox', token: w.admin.token })).json().items as {
        kind: string;
        eventType: string;
      }[];
    expect((await inboxOf(ws)).filter((i) => i.kind === 'health.incident_opened')).toEqual([
      expect.objectContaining({ eventType: 'health.oauth-google' }),
    ]);
    expect((await inboxOf(other)).filter((i) => i.kind.startsWith('health.'))).toEqual([]);
    const status = await t.request({ method: 'GET', url: '/api/v1/status' });
    expect(status.json().status).toBe('degraded');
    expect(status.json().features.find((f: { feature: string }) => f.feature === 'calendar-google').status).toBe(
      'down',
    );
    expect(status.body).not.toContain(ws.id);

    await cron();
    expect((await alerts()).filter((m) => m.subject.includes('Resolved: oauth-google'))).toEqual([]);
    await cron();
    const all = (await alerts()).map((m) => m.subject).filter((s) => s.includes('oauth-google'));
    expect(all.sort()).toEqual(
      ['[Atrium] Incident: oauth-google is failing', '[Atrium] Resolved: oauth-google recovered'].sort(),
    );
    const after = await t.request({ method: 'GET', url: '/api/v1/integrations/chain-health', token: ws.admin.token });
    expect(after.json().incidents[0]).toMatchObject({ component: 'oauth-google', status: 'closed' });
    expect(await bannersOf(ws)).toEqual([]);
    expect((await inboxOf(ws)).map((i) => i.kind)).toContain('health.incident_resolved');
    // The recovery closes the opening's notice, and is itself filed as handled: nothing is left for an admin to
    // resolve by hand; it says so in the users' words, not by the component's id.
    const open = (await t.request({ method: 'GET', url: '/api/v1/inbox?state=open', token: ws.admin.token })).json()
      .items as { kind: string }[];
    expect(open.filter((i) => i.kind.startsWith('health.'))).toEqual([]);
    const handled = (
      await t.request({ method: 'GET', url: '/api/v1/inbox?state=handled', token: ws.admin.token })
    ).json().items as { kind: string; state: string; lastError: string }[];
    expect(
      handled
        .filter((i) => i.kind.startsWith('health.'))
        .map((i) => [i.kind, i.state])
        .sort(),
    ).toEqual([
      ['health.incident_opened', 'resolved'],
      ['health.incident_resolved', 'resolved'],
    ]);
    const resolvedNotice = handled.find((i) => i.kind === 'health.incident_resolved');
    expect(resolvedNotice?.lastError).toMatch(/^Working normally again\. It was: .*Google Calendar/);
  });

  it('the telehealth banner and notice go only where video visits can be held', async () => {
    // A workspace that has had a video room but no calendar connection now (rooms outlive connections).
    const roomsOnly = await createWorkspace(t, { tier: 'advanced' });
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(
        sql`INSERT INTO telehealth_rooms (workspace_id, id, event_id) VALUES (${roomsOnly.id}, 'room_probe_banner', 'evt_probe_banner')`,
      ),
    );
    await t.request({
      method: 'POST',
      url: '/_emulators/video/faults',
      payload: { operation: 'stun.binding', status: 503, times: 1000 },
    });
    try {
      for (let run = 0; run < 3; run++) await cron();
    } finally {
      await t.request({ method: 'DELETE', url: '/_emulators/video/faults' });
    }
    const telehealthBanners = async (w: TestWorkspace) =>
      (
        (await t.request({ method: 'GET', url: '/api/v1/health/banners', token: w.admin.token })).json().items as {
          feature: string;
        }[]
      ).filter((b) => b.feature === 'telehealth');
    const videoNotices = async (w: TestWorkspace) =>
      (
        (await t.request({ method: 'GET', url: '/api/v1/inbox', token: w.admin.token })).json().items as {
          eventType: string;
        }[]
      ).filter((i) => i.eventType === 'health.video');
    try {
      // `ws` has a Google Calendar connection; `roomsOnly` has had rooms; `other` has neither.
      expect(await telehealthBanners(ws)).toHaveLength(1);
      expect(await telehealthBanners(roomsOnly)).toHaveLength(1);
      expect(await telehealthBanners(other)).toEqual([]);
      expect(await videoNotices(ws)).toHaveLength(1);
      expect(await videoNotices(other)).toEqual([]);
    } finally {
      // Two passing runs close it again, so the tests after see no open incident.
      await cron();
      await cron();
    }
    expect(await telehealthBanners(ws)).toEqual([]);
  });

  it('the dashboard is for workspace admins only', async () => {
    const member = await addMember(t, ws, { role: 'member' });
    const res = await t.request({ method: 'GET', url: '/api/v1/integrations/chain-health', token: member.token });
    expect(res.statusCode).toBe(403);
  });

  it('an AI provider answering 5xx fails ai:latency, and the next run sees the recovery', async () => {
    await t.request({
      method: 'POST',
      url: '/_emulators/ai/faults',
      payload: { operation: 'chat.completions', status: 503, times: 1 },
    });
    const body = (await cron()).json() as { checks: Checks };
    expect(body.checks['ai:latency'][0]).toMatchObject({ status: 'fail', observedValue: 503 });
    // The fallback is its own endpoint: the primary's fault does not fail it.
    expect(body.checks['ai:fallback'][0]).toMatchObject({ status: 'pass' });
    expect((await cron()).json().checks['ai:latency'][0].status).toBe('pass');
  });
});

describe('incident rule (recordRun)', () => {
  // Runs of a component no module declares (no banner, no notice), written the way the scheduler writes them.
  let clock = Date.now();
  const run = (component: string, statuses: Record<string, 'pass' | 'warn' | 'fail'>) => {
    clock += 1000;
    return recordRun(
      t.app.atrium,
      Object.entries(statuses).map(([measurement, status]) => ({
        id: `${component}:${measurement}`,
        component,
        measurement,
        status,
        observedValue: status === 'fail' ? 503 : 1,
        observedUnit: status === 'fail' ? 'http status' : 'ms',
        time: new Date(clock).toISOString(),
      })),
    );
  };
  const incidentOf = async (component: string) =>
    withSystem(t.app.atrium.db, (tx) =>
      tx.select().from(healthIncidents).where(eq(healthIncidents.component, component)),
    );

  it('closes once no measurement has failed for 2 runs, a sibling that only warns included', async () => {
    // ai:fallback warns for good with a single provider; tts:fallback without a fallback voice likewise.
    for (let i = 0; i < 3; i++) await run('rule-warn', { latency: 'fail', fallback: 'warn' });
    expect((await incidentOf('rule-warn')).map((i) => i.status)).toEqual(['open']);
    await run('rule-warn', { latency: 'pass', fallback: 'warn' });
    expect((await incidentOf('rule-warn')).map((i) => i.status)).toEqual(['open']);
    await run('rule-warn', { latency: 'pass', fallback: 'warn' });
    expect((await incidentOf('rule-warn')).map((i) => i.status)).toEqual(['closed']);
    const subjects = (await alerts()).map((m) => m.subject).filter((s) => s.includes('rule-warn'));
    expect(subjects.sort()).toEqual(
      ['[Atrium] Incident: rule-warn is failing', '[Atrium] Resolved: rule-warn recovered'].sort(),
    );
  });

  it('a failing measurement keeps it open until it passes twice (a warning is not enough); a warning one alone never opens one', async () => {
    for (let i = 0; i < 3; i++) await run('rule-mixed', { a: 'fail', b: 'pass' });
    // `a` recovers, `b` now fails now and then: no 2 runs in a row without a failure.
    await run('rule-mixed', { a: 'pass', b: 'fail' });
    await run('rule-mixed', { a: 'pass', b: 'pass' });
    expect((await incidentOf('rule-mixed')).map((i) => i.status)).toEqual(['open']);
    // `a` opened it and `b` failed during it: both must pass 2 runs (contract §9); warning is not passing.
    await run('rule-mixed', { a: 'warn', b: 'pass' });
    await run('rule-mixed', { a: 'pass', b: 'warn' });
    expect((await incidentOf('rule-mixed')).map((i) => i.status)).toEqual(['open']);
    await run('rule-mixed', { a: 'pass', b: 'pass' });
    expect((await incidentOf('rule-mixed')).map((i) => i.status)).toEqual(['open']);
    await run('rule-mixed', { a: 'pass', b: 'pass' });
    expect((await incidentOf('rule-mixed')).map((i) => i.status)).toEqual(['closed']);
    for (let i = 0; i < 5; i++) await run('rule-warn-only', { a: 'warn' });
    expect(await incidentOf('rule-warn-only')).toEqual([]);
  });
});

describe('recording a run', () => {
  it("keeps the run's results, and the other components' incidents, when one component's notices fail", async () => {
    let broken = true;
    const probe = (id: string, affects: DependencyProbe['affects']): DependencyProbe => ({
      id,
      feature: id.split(':')[0],
      slo: 'answers',
      affects,
      measure: async () => ({ status: 'pass', observedValue: 1, observedUnit: 'ms' }),
    });
    const deps = {
      ...t.app.atrium,
      monitors: [
        ...t.app.atrium.monitors,
        // Its notices fail (say, a workspace's check throws) while `broken`.
        probe('rec-boom:x', async () => {
          if (broken) throw new Error('affects failed');
          return false;
        }),
        probe('rec-calm:x', async () => false),
      ],
    };
    const at = Date.now() + 3_600_000;
    const run = (n: number) =>
      recordRun(
        deps,
        ['rec-boom', 'rec-calm'].map((component) => ({
          id: `${component}:x`,
          component,
          measurement: 'x',
          status: 'fail' as const,
          observedValue: 503,
          observedUnit: 'http status',
          time: new Date(at + n * 1000).toISOString(),
        })),
      );
    const checks = (component: string) =>
      withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ n: number }>(
          tx,
          sql`SELECT count(*)::int AS n FROM service_health_checks WHERE component = ${component}`,
        ),
      ).then((rows) => rows[0].n);
    const open = async (component: string) =>
      (
        await withSystem(t.app.atrium.db, (tx) =>
          tx.select().from(healthIncidents).where(eq(healthIncidents.component, component)),
        )
      ).filter((i) => i.status === 'open').length;
    await run(1);
    await run(2);
    // The third failing run opens both; rec-boom's notices fail.
    await expect(run(3)).rejects.toThrow(/affects failed/);
    expect([await checks('rec-boom'), await checks('rec-calm')]).toEqual([3, 3]);
    expect([await open('rec-boom'), await open('rec-calm')]).toEqual([0, 1]);
    // Its incident opens (once) at the next run that can tell its workspaces.
    broken = false;
    await run(4);
    expect([await open('rec-boom'), await open('rec-calm')]).toEqual([1, 1]);
    const subjects = (await alerts()).map((m) => m.subject).filter((s) => s.includes('rec-'));
    expect(subjects.sort()).toEqual([
      '[Atrium] Incident: rec-boom is failing',
      '[Atrium] Incident: rec-calm is failing',
    ]);
  });
});

describe('the public status page', () => {
  const storageRun = (at: Date, status: 'pass' | 'fail') =>
    recordRun(t.app.atrium, [
      {
        id: 'storage:write',
        component: 'storage',
        measurement: 'write',
        status,
        observedValue: 3,
        observedUnit: 'ms',
        time: at.toISOString(),
      },
    ]);
  type Status = { features: { feature: string; uptime: { day: string; percent: number }[] }[] };
  const uptimeOf = (body: Status, feature: string) => body.features.find((f) => f.feature === feature)?.uptime ?? [];

  /** GET /api/v1/status answered by an app whose database sessions run in this time zone. */
  async function statusInTimeZone(timeZone: string): Promise<Status> {
    if (!t.testDb.url) {
      // PGlite: one session, shared by the whole app.
      await t.app.atrium.db.execute(sql.raw(`SET timezone = '${timeZone}'`));
      // An (empty) run recorded here drops the answer the page keeps for 30 s.
      await recordRun(t.app.atrium, []);
      try {
        return (await t.request({ method: 'GET', url: '/api/v1/status' })).json();
      } finally {
        await t.app.atrium.db.execute(sql`RESET timezone`);
      }
    }
    // The server: the database's default, which new sessions (another instance's pool) take.
    const owner = async (statement: string) => {
      const client = new pg.Client({ connectionString: t.testDb.url });
      await client.connect();
      await client.query(statement).finally(() => client.end());
    };
    const name = new URL(t.testDb.url).pathname.slice(1);
    await owner(`ALTER DATABASE "${name}" SET timezone = '${timeZone}'`);
    const instance = await t.startInstance();
    try {
      return (await (await fetch(`${instance.baseUrl}/api/v1/status`)).json()) as Status;
    } finally {
      await instance.close();
      await owner(`ALTER DATABASE "${name}" RESET timezone`);
    }
  }

  /** What the page showed before the rollup: every day's share of runs not failing, from the raw checks. */
  async function fromChecks(feature: string) {
    const ids = t.app.atrium.monitors.filter((p) => p.feature === feature).map((p) => p.id);
    const rows = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ day: string; runs: number; passing: number }>(
        tx,
        sql`SELECT to_char(checked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS runs,
                   count(*) FILTER (WHERE status <> 'fail')::int AS passing
              FROM service_health_checks
             WHERE component || ':' || measurement IN (${sql.join(
               ids.map((id) => sql`${id}`),
               sql`, `,
             )})
               AND checked_at >= (now() AT TIME ZONE 'UTC')::date - 89
             GROUP BY 1 ORDER BY 1`,
      ),
    );
    return rows.map((r) => ({ day: r.day, percent: Math.round((r.passing / r.runs) * 1000) / 10 }));
  }

  it('keeps 90 days of uptime whatever ATRIUM_HEALTH_TTL, with the figures the checks give', async () => {
    const daysAgo = (n: number, time: string) =>
      new Date(`${new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10)}T${time}Z`);
    for (const [n, statuses] of [
      [80, ['pass', 'fail', 'pass']],
      [45, ['fail', 'fail', 'pass', 'pass']],
      [12, ['pass', 'pass']],
    ] as const) {
      for (const [i, status] of statuses.entries()) await storageRun(daysAgo(n, `0${i}:15:00`), status);
    }
    const before = (await t.request({ method: 'GET', url: '/api/v1/status' })).json() as Status;
    // Every feature: the same days and figures as the raw checks give.
    for (const feature of new Set(t.app.atrium.monitors.map((p) => p.feature)))
      expect(uptimeOf(before, feature), feature).toEqual(await fromChecks(feature));
    const storage = uptimeOf(before, 'storage');
    expect(storage.find((u) => u.day === daysAgo(80, '00:00:00').toISOString().slice(0, 10))?.percent).toBe(66.7);
    expect(storage.find((u) => u.day === daysAgo(45, '00:00:00').toISOString().slice(0, 10))?.percent).toBe(50);

    // The hourly sweep with the default TTL (30 days) deletes the checks of 80 and 45 days ago, not the page's days.
    const swept = await sweep({
      ...t.app.atrium,
      config: { ...t.app.atrium.config, health: { ...t.app.atrium.config.health, ttlMs: 30 * 86_400_000 } },
    });
    expect(swept).toBe(7);
    const after = (await t.request({ method: 'GET', url: '/api/v1/status' })).json() as Status;
    expect(uptimeOf(after, 'storage')).toEqual(storage);
  });

  it("answers from a short cache, which this instance's next run refreshes", async () => {
    const first = (await t.request({ method: 'GET', url: '/api/v1/status' })).json() as Status;
    const day = new Date(Date.now() - 70 * 86_400_000).toISOString().slice(0, 10);
    // Another instance's run, straight into the rollup: not seen for up to 30 s.
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(
        sql`INSERT INTO health_daily (component, measurement, day, runs, passing) VALUES ('storage', 'write', ${day}, 4, 1)`,
      ),
    );
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, () => t.request({ method: 'GET', url: '/api/v1/status' })),
    );
    for (const res of concurrent) expect(res.json()).toEqual(first);
    // A run recorded here refreshes it.
    await storageRun(new Date(), 'pass');
    const fresh = (await t.request({ method: 'GET', url: '/api/v1/status' })).json() as Status;
    expect(uptimeOf(fresh, 'storage').find((u) => u.day === day)).toEqual({ day, percent: 25 });
  });

  it('counts days in UTC, whatever the time zone of the database sessions', async () => {
    const day = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    const next = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);
    await storageRun(new Date(`${day}T12:00:00Z`), 'pass');
    // 00:30 the next day in Berlin: still `day` in UTC.
    await storageRun(new Date(`${day}T23:30:00Z`), 'fail');
    for (const timeZone of ['UTC', 'Europe/Berlin', 'America/Los_Angeles']) {
      const uptime = uptimeOf(await statusInTimeZone(timeZone), 'storage');
      expect(
        uptime.filter((u) => u.day === day || u.day === next),
        timeZone,
      ).toEqual([{ day, percent: 50 }]);
    }
  });
});

describe('the dashboard', () => {
  it('covers the last 24 h of every probe, with every probe run once a minute', async () => {
    // 24 h of scheduled runs (one a minute) of every declared probe: 25 × 1,440 rows, older than anything since.
    const ids = t.app.atrium.monitors.map((p) => p.id);
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(sql`
        INSERT INTO service_health_checks
               (id, run_id, component, measurement, status, observed_value, observed_unit, checked_at)
        SELECT 'hck_seed_' || p.ord || '_' || m, 'hrun_seed_' || m, split_part(p.id, ':', 1),
               substr(p.id, strpos(p.id, ':') + 1), 'pass', '1', 'ms',
               now() - interval '10 minutes' - m * interval '1 minute'
          FROM unnest(${sql.raw(`ARRAY[${ids.map((id) => `'${id}'`).join(',')}]::text[]`)}) WITH ORDINALITY AS p(id, ord),
               generate_series(0, 1428) AS m`),
    );
    const res = await t.request({ method: 'GET', url: '/api/v1/integrations/chain-health', token: ws.admin.token });
    expect(res.statusCode).toBe(200);
    const components = res.json().components as { name: string; history: { at: string }[] }[];
    expect(components.map((c) => c.name).sort()).toEqual([...ids].sort());
    for (const c of components) {
      const oldest = Date.parse(c.history[c.history.length - 1].at);
      const hours = (Date.now() - oldest) / 3600_000;
      expect(hours, `${c.name}: history covers ${hours.toFixed(1)} h`).toBeGreaterThan(23.8);
      expect(c.history.length, c.name).toBeGreaterThanOrEqual(1429);
    }
  }, 60_000);
});

describe('notices of a recovery', () => {
  it('a workspace the component stopped touching during the incident has its opening notice settled too', async () => {
    const ws = await createWorkspace(t, { tier: 'advanced' });
    let touching = true;
    const deps = {
      ...t.app.atrium,
      monitors: [
        ...t.app.atrium.monitors,
        {
          id: 'settle-x:m',
          feature: 'settle-x',
          slo: 'answers',
          impact: 'Settle-x is not answering.',
          affects: async (_tx: unknown, workspaceId: string) => workspaceId === ws.id && touching,
          measure: async () => ({ status: 'pass' as const, observedValue: 1, observedUnit: 'ms' }),
        } satisfies DependencyProbe,
      ],
    };
    const at = Date.now() + 7_200_000;
    const run = (n: number, status: 'pass' | 'fail') =>
      recordRun(deps, [
        {
          id: 'settle-x:m',
          component: 'settle-x',
          measurement: 'm',
          status,
          observedValue: status === 'fail' ? 503 : 1,
          observedUnit: status === 'fail' ? 'http status' : 'ms',
          time: new Date(at + n * 1000).toISOString(),
        },
      ]);
    const openNotices = async () =>
      (
        (await t.request({ method: 'GET', url: '/api/v1/inbox?state=open', token: ws.admin.token })).json().items as {
          eventType: string;
        }[]
      ).filter((i) => i.eventType === 'health.settle-x');
    for (let n = 1; n <= 3; n++) await run(n, 'fail');
    expect(await openNotices()).toHaveLength(1);
    // The workspace stops using the feature (disconnects the provider) while the incident is open.
    touching = false;
    await run(4, 'pass');
    await run(5, 'pass');
    expect(await openNotices()).toEqual([]);
  });
});
