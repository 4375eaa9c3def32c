import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/helpers/app.js';
import { ConfigError, loadConfig } from './config.js';
import { queryRows, withSystem } from './platform/db/tenant.js';
import { DEMO_PASSWORD, DEMO_USERS, lockPublishedPasswords, seedDemo, shouldSeedDemo } from './seed.js';

const production = {
  ATRIUM_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  ATRIUM_OPERATOR_TOKEN: 'x'.repeat(20),
  ATRIUM_DATA_DIR: '/tmp/atrium-seed-test',
};

describe('demo organization in production (published password)', () => {
  it('refuses ATRIUM_SEED_DEMO=on in production, whatever the case of NODE_ENV', () => {
    for (const NODE_ENV of ['production', 'Production', 'PRODUCTION', ' production ']) {
      expect(() => loadConfig({ ...production, NODE_ENV, ATRIUM_SEED_DEMO: 'on' }), NODE_ENV).toThrow(ConfigError);
      expect(() => loadConfig({ ...production, NODE_ENV, ATRIUM_SEED_DEMO: 'on' })).toThrow(/ATRIUM_SEED_DEMO/);
    }
  });

  it('never seeds a new embedded database in production by default', () => {
    const config = loadConfig({ ...production, NODE_ENV: 'Production' });
    expect(config.env).toBe('production');
    expect(config.seedDemo).toBe(false);
    expect(config.databaseUrl).toBeUndefined();
    expect(shouldSeedDemo(config, true)).toBe(false);
    // Even a config object that says otherwise does not seed in production.
    expect(shouldSeedDemo({ ...config, seedDemo: true }, true)).toBe(false);
    expect(shouldSeedDemo({ ...config, seedDemo: 'auto' }, true)).toBe(false);
  });

  it('seeds a new embedded database in development, and only a new one', () => {
    const config = loadConfig({ ...production, NODE_ENV: 'development', ATRIUM_EMULATORS: 'on' });
    expect(shouldSeedDemo(config, true)).toBe(true);
    expect(shouldSeedDemo(config, false)).toBe(false);
  });
});

describe('seedDemo', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  /** The demo admin's session cookie (signed in with the published password). */
  const demoAdminCookie = async () => {
    const signedIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: { email: DEMO_USERS[0].email, password: DEMO_PASSWORD },
    });
    return String(signedIn.headers['set-cookie']).split(';')[0];
  };

  const userCount = async () =>
    Number(
      (
        await withSystem(t.database.db, (tx) => queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM users`))
      )[0].n,
    );

  it('creates no account when the app runs in production', async () => {
    const before = await userCount();
    const real = t.app.atrium.config;
    t.app.atrium.config = { ...real, env: 'production' };
    try {
      await expect(seedDemo(t.app)).rejects.toThrow(/production/);
    } finally {
      t.app.atrium.config = real;
    }
    expect(await userCount()).toBe(before);
  });

  it('creates the demo accounts in development, and the published password signs in', async () => {
    await seedDemo(t.app);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: { email: DEMO_USERS[0].email, password: DEMO_PASSWORD },
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('lists no set-up API token for anyone, and adds each person to each workspace once in its audit log', async () => {
    const tokens = await withSystem(t.database.db, (tx) =>
      queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM api_tokens`),
    );
    expect(tokens[0].n).toBe(0);
    const adds = await withSystem(t.database.db, (tx) =>
      queryRows<{ workspace_id: string; target: string; n: number }>(
        tx,
        sql`SELECT workspace_id, data->>'target' AS target, count(*)::int AS n FROM audit_log
             WHERE data->>'action' = 'members.add' GROUP BY 1, 2`,
      ),
    );
    expect(adds.length).toBe(DEMO_USERS.reduce((n, u) => n + u.workspaces.length, 0));
    expect(adds.filter((a) => a.n !== 1)).toEqual([]);
  });

  it('gives the demo admin staff conversations: one with Dr. Lee mentioning a patient, and a group with unread news', async () => {
    const cookie = await demoAdminCookie();
    const res = await t.request({ method: 'GET', url: '/api/v1/direct-messages', headers: { cookie } });
    expect(res.statusCode, res.body).toBe(200);
    const threads = res.json().items as { kind: string; title: string; unreadCount: number; id: string }[];
    expect(threads.map((th) => [th.kind, th.title, th.unreadCount])).toEqual(
      expect.arrayContaining([
        ['direct', 'Dr. Morgan Lee', 0],
        ['group', 'Front desk', 2],
      ]),
    );
    const direct = threads.find((th) => th.kind === 'direct')!;
    const history = await t.request({
      method: 'GET',
      url: `/api/v1/direct-messages/${direct.id}`,
      headers: { cookie },
    });
    expect(history.statusCode, history.body).toBe(200);
    const first = history.json().items.find((m: { body: string }) => m.body.startsWith('Morning!'));
    expect(first.mentions).toEqual([expect.objectContaining({ type: 'patient', displayName: 'Eleanor Vance' })]);
  });

  it("shows Harbor Therapy's week beside Riverside's in All locations, its visit linked to Harbor's patient", async () => {
    const cookie = await demoAdminCookie();
    const now = Date.now();
    const query = new URLSearchParams({
      timeMin: new Date(now - 8 * 86_400_000).toISOString(),
      timeMax: new Date(now + 8 * 86_400_000).toISOString(),
      scope: 'organization',
    });
    const res = await t.request({ method: 'GET', url: `/api/v1/calendar/events?${query}`, headers: { cookie } });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as { title: string; workspaceId: string; patientId: string | null }[];
    const me = (await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).json();
    const workspaces = new Set(items.map((e) => e.workspaceId));
    expect(workspaces.size).toBe(2);
    expect(workspaces.has(me.workspace.id)).toBe(true);
    const therapy = items.find((e) => e.title === 'Occupational therapy: Tomas Lindqvist');
    expect(therapy?.workspaceId).not.toBe(me.workspace.id);
    expect(therapy?.patientId).toMatch(/^pat_/);
  });

  it("gives the demo week's video visits (Meet, Teams and Zoom) a telehealth room, and Zoom's join link is at this server", async () => {
    const cookie = await demoAdminCookie();
    const now = Date.now();
    const query = new URLSearchParams({
      timeMin: new Date(now - 8 * 86_400_000).toISOString(),
      timeMax: new Date(now + 8 * 86_400_000).toISOString(),
    });
    type Listed = {
      id: string;
      recurringEventId: string | null;
      title: string;
      conference: { product: string; joinUrl: string } | null;
    };
    const res = await t.request({ method: 'GET', url: `/api/v1/calendar/events?${query}`, headers: { cookie } });
    expect(res.statusCode, res.body).toBe(200);
    const video = (res.json().items as Listed[]).filter((e) => e.conference);
    // Each has its room (its join link is prepared by a background job).
    const roomRows = await withSystem(t.database.db, (tx) =>
      queryRows<{ event_id: string; standing: boolean }>(tx, sql`SELECT event_id, standing FROM telehealth_rooms`),
    );
    const rooms = new Map(roomRows.map((r) => [r.event_id, r.standing]));
    expect(new Set(video.map((e) => e.conference?.product))).toEqual(new Set(['meet', 'teams', 'zoom']));
    for (const e of video) {
      expect(rooms.has(e.recurringEventId ?? e.id), e.title).toBe(true);
      // A repeating video meeting's room serves every occurrence.
      expect(rooms.get(e.recurringEventId ?? e.id), e.title).toBe(Boolean(e.recurringEventId));
      expect(e.conference?.joinUrl, e.title).toMatch(/^https?:\/\//);
      if (e.conference?.product === 'zoom') expect(e.conference.joinUrl.startsWith(t.app.atrium.selfUrl())).toBe(true);
    }
  });
  it("shows the demo week's all-day events (one on Google, two days on Microsoft) as days", async () => {
    const cookie = await demoAdminCookie();
    const now = Date.now();
    const query = new URLSearchParams({
      timeMin: new Date(now - 8 * 86_400_000).toISOString(),
      timeMax: new Date(now + 8 * 86_400_000).toISOString(),
    });
    const res = await t.request({ method: 'GET', url: `/api/v1/calendar/events?${query}`, headers: { cookie } });
    const allDay = (
      res.json().items as { title: string; provider: string; allDay: boolean; start: string; end: string }[]
    )
      .filter((e) => e.allDay)
      .map((e) => ({ provider: e.provider, days: (Date.parse(e.end) - Date.parse(e.start)) / 86_400_000, e }));
    expect(allDay.map((a) => [a.provider, a.days]).sort()).toEqual([
      ['google', 1],
      ['microsoft', 2],
    ]);
    for (const { e } of allDay) expect(e.start, e.title).toMatch(/T00:00:00\.000Z$/);
  });
  it("gives the demo visits' tasks their visit's end as due time, so one left undone is carried to Today", async () => {
    const cookie = await demoAdminCookie();
    const now = Date.now();
    const query = new URLSearchParams({
      timeMin: new Date(now - 8 * 86_400_000).toISOString(),
      timeMax: new Date(now + 8 * 86_400_000).toISOString(),
    });
    const listed = await t.request({ method: 'GET', url: `/api/v1/calendar/events?${query}`, headers: { cookie } });
    const events = listed.json().items as { id: string; end: string; title: string }[];
    const res = await t.request({ method: 'GET', url: '/api/v1/tasks', headers: { cookie } });
    expect(res.statusCode, res.body).toBe(200);
    const tasks = res.json().items as { title: string; eventId: string | null; dueAt: string | null }[];
    expect(tasks.map((task) => task.title).sort()).toEqual([
      'Bring discharge summaries',
      'Send the telehealth link by text',
    ]);
    for (const task of tasks) {
      const event = events.find((e) => e.id === task.eventId);
      expect(event, task.title).toBeDefined();
      expect(task.dueAt, task.title).toBe(event?.end);
    }
  });
  it('in production, locks demo accounts with the published password: sign-in refused, sessions and tokens revoked', async () => {
    const cookie = await demoAdminCookie();
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(200);
    const real = t.app.atrium.config;
    t.app.atrium.config = { ...real, env: 'production' };
    try {
      const locked = await lockPublishedPasswords(t.app.atrium);
      expect(locked).toEqual(expect.arrayContaining(DEMO_USERS.map((u) => u.email)));
      expect(await lockPublishedPasswords(t.app.atrium)).toEqual([]);
      expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(401);
      const signIn = await t.request({
        method: 'POST',
        url: '/api/v1/auth/sign-in',
        payload: { email: DEMO_USERS[0].email, password: DEMO_PASSWORD },
      });
      expect(signIn.statusCode).toBe(401);
    } finally {
      t.app.atrium.config = real;
    }
    // Also outside production: the account has no password until a reset link sets one.
    const again = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: { email: DEMO_USERS[0].email, password: DEMO_PASSWORD },
    });
    expect(again.statusCode).toBe(401);
  });
});
