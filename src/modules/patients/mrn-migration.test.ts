// Migration 0011 (unique MRN per workspace) on a database that already holds duplicate MRNs: it must
// stop with a clear error and change nothing, never pick a winner silently (PHI). Runs the real
// migration files on a fresh embedded PostgreSQL, first up to 0010, then 0011.
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyPglite } from '../../../test/helpers/db-template.js';
import { removeMigrationCopies, migrationsUpTo as upTo } from '../../../test/helpers/migrations.js';

const TAG = '0011_patients_mrn_unique';
afterAll(removeMigrationCopies);

/** The migrations before 0011 (or up to and including it). */
const migrationsUpTo = (includeMrn: boolean) => upTo(TAG, includeMrn);

async function databaseWithPatients(mrns: [string, string | null][]) {
  const client = await createEmptyPglite();
  const db = drizzle({ client });
  await migrate(db, { migrationsFolder: migrationsUpTo(false) });
  await client.exec(`INSERT INTO workspaces (id, name, tier) VALUES ('ws_a', 'A', 'free'), ('ws_b', 'B', 'free')`);
  for (const [i, [workspace, mrn]] of mrns.entries()) {
    await client.query(
      `INSERT INTO patients (workspace_id, id, given_name, family_name, mrn) VALUES ($1, $2, 'P', 'Q', $3)`,
      [workspace, `pat_${i}`, mrn],
    );
  }
  return { client, db };
}

describe('migration 0011: unique MRN per workspace', () => {
  it('stops with an error naming the workspace when duplicates exist, and changes no patient', async () => {
    const { client, db } = await databaseWithPatients([
      ['ws_a', 'MRN-1'],
      ['ws_a', 'MRN-1'],
      ['ws_b', 'MRN-2'],
    ]);
    const failure = await migrate(db, { migrationsFolder: migrationsUpTo(true) }).then(
      () => undefined,
      (error: unknown) => error,
    );
    // drizzle wraps the database error ("Failed query: …") and keeps PostgreSQL's as the cause.
    const messages: string[] = [];
    for (let e = failure as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
      messages.push(String(e.message));
    }
    expect(messages.join('\n')).toMatch(/2 patients of workspace ws_a share one MRN/);
    const rows = await client.query<{ id: string; mrn: string | null }>('SELECT id, mrn FROM patients ORDER BY id');
    expect(rows.rows).toEqual([
      { id: 'pat_0', mrn: 'MRN-1' },
      { id: 'pat_1', mrn: 'MRN-1' },
      { id: 'pat_2', mrn: 'MRN-2' },
    ]);
    const index = await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'patients_mrn_unique'`);
    expect(index.rows).toHaveLength(0);
    await client.close();
  });

  it('applies when the same MRN is only in different workspaces and when MRNs are missing', async () => {
    const { client, db } = await databaseWithPatients([
      ['ws_a', 'MRN-1'],
      ['ws_b', 'MRN-1'],
      ['ws_a', null],
      ['ws_a', null],
    ]);
    await migrate(db, { migrationsFolder: migrationsUpTo(true) });
    const index = await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'patients_mrn_unique'`);
    expect(index.rows).toHaveLength(1);
    await client.close();
  });
});
