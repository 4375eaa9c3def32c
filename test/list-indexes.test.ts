// The lists a busy clinic reads every day are served by an index, not by reading the whole history
// (migration 0035; found by growing a workspace to two years of data). Each query below has the shape the
// service sends; with sequential scans turned off, the planner must still find the index meant for it.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, withSystem } from '../src/platform/db/tenant.js';
import { createTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
}, 60_000);

afterAll(async () => {
  await t?.close();
});

async function plan(query: ReturnType<typeof sql>): Promise<string> {
  return withSystem(t.app.atrium.db, async (tx) => {
    await tx.execute(sql`SET LOCAL enable_seqscan = off`);
    const rows = await queryRows<Record<string, string>>(tx, sql`EXPLAIN ${query}`);
    return rows.map((r) => Object.values(r)[0]).join('\n');
  });
}

describe('indexes for the daily lists', () => {
  it("a member's sessions (revoked on removal); the pruning job's batch of ended sessions", async () => {
    // The members list's last sign-in is on the membership now (migration 0039): it reads no session.
    expect(
      await plan(sql`SELECT id FROM sessions WHERE workspace_id = 'ws_x' AND user_id = 'usr_x' AND revoked_at IS NULL`),
    ).toContain('sessions_user_created_idx');
    expect(
      await plan(
        sql`SELECT workspace_id, id FROM sessions
             WHERE least(expires_at, revoked_at) < now() - interval '30 days' LIMIT 1000 FOR UPDATE SKIP LOCKED`,
      ),
    ).toContain('sessions_ended_idx');
  });

  it('the audit log by person and by date range, newest first', async () => {
    expect(
      await plan(
        sql`SELECT * FROM audit_log WHERE workspace_id = 'ws_x' AND actor_user_id = 'usr_x' ORDER BY id DESC LIMIT 50`,
      ),
    ).toContain('audit_actor_idx');
    expect(
      await plan(
        sql`SELECT * FROM audit_log WHERE workspace_id = 'ws_x' AND at >= '2025-01-01' AND at < '2025-01-02' ORDER BY id DESC LIMIT 50`,
      ),
    ).toContain('audit_at_idx');
  });

  it("the inbox's messages across conversations, all channels or one; the unread conversations", async () => {
    expect(
      await plan(sql`SELECT * FROM channel_messages WHERE workspace_id = 'ws_x' ORDER BY at DESC, id DESC LIMIT 51`),
    ).toContain('channel_messages_at_idx');
    expect(
      await plan(
        sql`SELECT * FROM channel_messages WHERE workspace_id = 'ws_x' AND channel = 'sms' ORDER BY at DESC, id DESC LIMIT 51`,
      ),
    ).toContain('channel_messages_at_idx');
    expect(
      await plan(
        sql`SELECT id, unread_count FROM channel_conversations WHERE workspace_id = 'ws_x' AND unread_count > 0 ORDER BY updated_at DESC, id DESC LIMIT 200`,
      ),
    ).toContain('channel_conversations_unread_idx');
  });
});
