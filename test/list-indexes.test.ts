// The lists a busy clinic reads every day are served by an index, not by reading the whole history
// (migration 0035; found by growing a workspace to two years of data). Each query below has the shape the
// service sends; with sequential scans turned off, the planner must still find the index meant for it.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, withSystem } from '../src/platform/db/tenant.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createWorkspace } from './helpers/factories.js';

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

  it('patients by the words of their name (messages search finds a mentioned patient by name)', async () => {
    // A workspace of 4,000 patients (statistics gathered), asked the shape of findPatientsByNameWords: any of
    // the words, on the expression the GIN index is built on, newest first. Before migration 0044 the words were
    // compared on an array built from every row's name, which reads all of the workspace's patients.
    const ws = await createWorkspace(t);
    await withSystem(t.app.atrium.db, async (tx) => {
      await tx.execute(sql`INSERT INTO patients (workspace_id, id, given_name, family_name)
        SELECT ${ws.id}, 'pat_' || lpad(i::text, 6, '0'), 'Given' || i, 'Family' || (i % 1000)
          FROM generate_series(1, 4000) i`);
      await tx.execute(sql`ANALYZE patients`);
    });
    expect(
      await plan(
        sql`SELECT * FROM patients WHERE workspace_id = ${ws.id}
             AND to_tsvector('english'::regconfig, given_name || ' ' || family_name)
                 @@ replace(plainto_tsquery('english'::regconfig, 'family17 vance'::text)::text, ' & ', ' | ')::tsquery
             ORDER BY id DESC LIMIT 20`,
      ),
    ).toContain('patients_name_words_idx');
  });
});
