// Sessions are pruned 30 days after they ended (expired or revoked), by a durable job the hourly schedule
// queues, in batches; live sessions and recent ones stay, and the members list's last sign-in (kept on the
// membership since migration 0039) outlives the sessions it came from.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, TEST_PASSWORD, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { runDueJobs } from '../../platform/jobs/index.js';
import { identityModule } from './module.js';
import { pruneEndedSessions, pruneSessionsJob } from './session-pruning.js';

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard', name: 'Pruning' });
  other = await createWorkspace(t, { tier: 'standard', name: 'Pruning, elsewhere' });
}, 60_000);
afterAll(async () => t?.close());

const DAY = 24 * 3600_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

async function signIn(email: string, workspaceId?: string): Promise<string> {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/auth/sign-in',
    payload: { email, password: TEST_PASSWORD, ...(workspaceId ? { workspaceId } : {}) },
  });
  expect(res.statusCode, res.body).toBe(200);
  const match = /atrium_session=([^;]+)/.exec([res.headers['set-cookie']].flat().join(';'));
  return `atrium_session=${match![1]}`;
}

/** A session row as an old release or a long history left it (the cookie is never used). */
async function insertSession(
  workspaceId: string,
  userId: string,
  times: { created: string; expires: string; revoked?: string },
): Promise<string> {
  const id = `ses_test${Math.random().toString(36).slice(2)}`;
  await withSystem(t.app.atrium.db, (tx) =>
    tx.execute(sql`INSERT INTO sessions (workspace_id, id, user_id, token_hash, created_at, expires_at, revoked_at)
                   VALUES (${workspaceId}, ${id}, ${userId}, ${`hash-${id}`}, ${times.created}::timestamptz,
                           ${times.expires}::timestamptz, ${times.revoked ?? null}::timestamptz)`),
  );
  return id;
}

const sessionIds = async (userId: string) =>
  (
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ id: string }>(tx, sql`SELECT id FROM sessions WHERE user_id = ${userId} ORDER BY id`),
    )
  ).map((r) => r.id);

const lastSignIn = async (workspace: TestWorkspace, userId: string): Promise<string | null> => {
  const list = await t.request({ method: 'GET', url: '/api/v1/members', token: workspace.admin.token });
  expect(list.statusCode, list.body).toBe(200);
  return list.json().items.find((m: { userId: string }) => m.userId === userId).lastSignInAt;
};

const schedule = identityModule.schedules.find((s) => s.name === 'identity.prune-sessions')!;
const runPruning = async () => {
  // The hourly schedule queues the job (once, however often it ticks before the job ran); the worker runs it.
  await schedule.run(t.app.atrium);
  await schedule.run(t.app.atrium);
  return runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [pruneSessionsJob] });
};

describe('session pruning', () => {
  it('deletes sessions 30 days after they expired or were revoked; live and recent ones and lastSignInAt stay', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    const live = await signIn(member.email);
    const [liveId] = await sessionIds(member.userId);
    // A member who signed in once, long ago: that session, long expired, was the only trace of it.
    const lapsed = await addMember(t, ws, { password: TEST_PASSWORD });
    await signIn(lapsed.email);
    const [lapsedId] = await sessionIds(lapsed.userId);
    const lapsedSignIn = await lastSignIn(ws, lapsed.userId);
    expect(lapsedSignIn).not.toBeNull();
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(
        sql`UPDATE sessions SET created_at = ${ago(60)}::timestamptz, expires_at = ${ago(59)}::timestamptz
             WHERE id = ${lapsedId}`,
      ),
    );
    const gone = [
      lapsedId,
      await insertSession(ws.id, member.userId, { created: ago(40), expires: ago(39) }),
      // Revoked a month ago, though it would have lasted longer (a long ATRIUM_SESSION_TTL).
      await insertSession(ws.id, member.userId, { created: ago(32), expires: ago(-30), revoked: ago(31) }),
      // Another workspace's: the job sweeps every workspace.
      await insertSession(other.id, other.admin.userId, { created: ago(45), expires: ago(44) }),
    ];
    const kept = [
      liveId,
      await insertSession(ws.id, member.userId, { created: ago(30), expires: ago(29) }),
      await insertSession(ws.id, member.userId, { created: ago(2), expires: ago(-1), revoked: ago(1) }),
      await insertSession(ws.id, member.userId, { created: ago(0), expires: ago(-1) }),
    ];
    const memberSignIn = await lastSignIn(ws, member.userId);

    expect(await runPruning()).toBe(1);
    const left = [
      ...(await sessionIds(member.userId)),
      ...(await sessionIds(lapsed.userId)),
      ...(await sessionIds(other.admin.userId)),
    ];
    for (const id of kept) expect(left).toContain(id);
    for (const id of gone) expect(left).not.toContain(id);
    // The last sign-ins are what they were, also where every session they came from is gone.
    expect(await sessionIds(lapsed.userId)).toEqual([]);
    expect(await lastSignIn(ws, lapsed.userId)).toBe(lapsedSignIn);
    expect(await lastSignIn(ws, member.userId)).toBe(memberSignIn);
    // The live session still works.
    const me = await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie: live } });
    expect(me.statusCode, me.body).toBe(200);
    // Nothing left to do: another run deletes nothing.
    expect(await pruneEndedSessions(t.app.atrium)).toEqual({ deleted: 0, batches: 1 });
  });

  it('deletes in batches, each its own transaction', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    for (let i = 0; i < 5; i++) await insertSession(ws.id, member.userId, { created: ago(50), expires: ago(49) });
    expect(await pruneEndedSessions(t.app.atrium, { batchSize: 2 })).toEqual({ deleted: 5, batches: 3 });
    expect(await sessionIds(member.userId)).toEqual([]);
  });

  it('a sign-in and a switch to another workspace each set that workspace’s last sign-in, and keep the other’s', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    await addMember(t, other, { email: member.email });
    expect(await lastSignIn(other, member.userId)).toBeNull();
    const cookie = await signIn(member.email, ws.id);
    const inWs = await lastSignIn(ws, member.userId);
    expect(inWs).not.toBeNull();
    const switched = await t.request({
      method: 'POST',
      url: '/api/v1/auth/switch-workspace',
      payload: { workspaceId: other.id },
      headers: { cookie, 'x-requested-with': 'fetch' },
    });
    expect(switched.statusCode, switched.body).toBe(200);
    const inOther = await lastSignIn(other, member.userId);
    expect(inOther).not.toBeNull();
    expect(Date.parse(inOther!)).toBeGreaterThanOrEqual(Date.parse(inWs!));
    // The session moved away, but the member did sign in to the first workspace.
    expect(await lastSignIn(ws, member.userId)).toBe(inWs);
  });
});
