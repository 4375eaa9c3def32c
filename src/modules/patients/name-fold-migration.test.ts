// Migration 0036 (folded name keys) on a database that already holds patients: the keys of the
// existing rows are filled by the migration itself, and a later write by plain SQL keeps them right.
// Runs the real migration files on a fresh embedded PostgreSQL, first up to 0035, then 0036.
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyPglite } from '../../../test/helpers/db-template.js';
import { migrationsUpTo, removeMigrationCopies } from '../../../test/helpers/migrations.js';

const TAG = '0036_patient_name_fold';
afterAll(removeMigrationCopies);

describe('migration 0036: folded name keys', () => {
  it('fills the keys of existing patients, and keeps them on later writes', async () => {
    const client = await createEmptyPglite();
    const db = drizzle({ client });
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, false) });
    await client.exec(`INSERT INTO workspaces (id, name, tier) VALUES ('ws_a', 'A', 'free')`);
    await client.exec(
      `INSERT INTO patients (workspace_id, id, given_name, family_name) VALUES
         ('ws_a', 'pat_1', 'José', 'Müller'), ('ws_a', 'pat_2', 'Renée', 'García-Ørsted')`,
    );
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, true) });
    const keys = async () =>
      (
        await client.query<{ id: string; given_name_key: string; family_name_key: string }>(
          'SELECT id, given_name_key, family_name_key FROM patients ORDER BY id',
        )
      ).rows;
    expect(await keys()).toEqual([
      { id: 'pat_1', given_name_key: 'jose', family_name_key: 'muller' },
      { id: 'pat_2', given_name_key: 'renee', family_name_key: 'garcia orsted' },
    ]);
    await client.exec(`UPDATE patients SET given_name = 'Zoë' WHERE id = 'pat_1'`);
    await client.exec(
      `INSERT INTO patients (workspace_id, id, given_name, family_name) VALUES ('ws_a', 'pat_3', 'Łukasz', 'Straße')`,
    );
    expect(await keys()).toEqual([
      { id: 'pat_1', given_name_key: 'zoe', family_name_key: 'muller' },
      { id: 'pat_2', given_name_key: 'renee', family_name_key: 'garcia orsted' },
      { id: 'pat_3', given_name_key: 'lukasz', family_name_key: 'strasse' },
    ]);
    const indexes = await client.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'patients' ORDER BY indexname`,
    );
    expect(indexes.rows.map((r) => r.indexname)).toEqual([
      'patients_mrn_unique',
      'patients_name_key_idx',
      'patients_workspace_id_id_pk',
    ]);
    await client.close();
  });
});
