// atrium_fold_name (migration 0036): how patient names and search terms are folded, on whichever
// database the tests run (PGlite, or the server with ATRIUM_TEST_DATABASE_URL): core SQL only, no
// extension. And the indexes on the folded keys serve the duplicate check and prefixes.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { TEST_SERVER_URL } from '../../../test/helpers/db.js';
import { createWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem, withTenant } from '../../platform/db/tenant.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

async function fold(values: (string | null)[]): Promise<(string | null)[]> {
  return withSystem(t.app.atrium.db, async (tx) => {
    const rows = await queryRows<{ f: string | null }>(
      tx,
      sql`SELECT atrium_fold_name(v) AS f FROM (VALUES ${sql.join(
        values.map((v, i) => sql`(${i}::int, ${v}::text)`),
        sql`, `,
      )}) AS x(i, v) ORDER BY i`,
    );
    return rows.map((r) => r.f);
  });
}

describe('atrium_fold_name', () => {
  const cases: [string, string][] = [
    // Accents and case (NFKD, marks dropped, lower-case).
    ['José Müller', 'jose muller'],
    ['RENÉE GARCÍA', 'renee garcia'],
    ['Zoë', 'zoe'],
    ['François Çelik', 'francois celik'],
    ['Ångström', 'angstrom'],
    ['Nguyễn Thị Ánh', 'nguyen thi anh'],
    ['Dvořák', 'dvorak'],
    ['Ștefan Țurcanu', 'stefan turcanu'],
    ['İstanbul', 'istanbul'],
    ['Σωκράτης', 'σωκρατησ'],
    // Compatibility forms NFKD maps: full-width letters, ligatures.
    ['Ｊｏｓｅ', 'jose'],
    ['ﬁona', 'fiona'],
    ['Ĳsselmeer', 'ijsselmeer'],
    // Letters NFKD leaves alone, capitals and small.
    ['Straße', 'strasse'],
    ['STRAẞE', 'strasse'],
    ['Æbelø', 'aebelo'],
    ['ÆBELØ', 'aebelo'],
    ['Œuvray', 'oeuvray'],
    ['Łódź', 'lodz'],
    ['Đorđević', 'dordevic'],
    ['Þórður', 'thordur'],
    ['Ðóra', 'dora'],
    ['Ħaġar', 'hagar'],
    ['Kızıl', 'kizil'],
    ['Ŧ ŋ Ŋ', 't n n'],
    // Hyphens become spaces, apostrophes and the middle dot go, white space collapses.
    ['Smith-Jones', 'smith jones'],
    ['Smith – Jones', 'smith jones'],
    ['O’Brien', 'obrien'],
    ["D'Angelo", 'dangelo'],
    ['Kaʻahumanu', 'kaahumanu'],
    ['Gal·la', 'galla'],
    ['  Mary \t Ann  ', 'mary ann'],
    // Nothing left.
    ['’', ''],
    ['-', ''],
    // Other scripts keep their letters and vowel signs.
    ['राम', 'राम'],
    ['王芳', '王芳'],
    // Untouched: plain lower-case ASCII, digits, a comma.
    ['hopper, grace 2', 'hopper, grace 2'],
  ];

  it('folds accents, case and the letters NFKD leaves alone', async () => {
    const folded = await fold(cases.map(([input]) => input));
    expect(cases.map(([input], i) => [input, folded[i]])).toEqual(cases);
  });

  it('is null for null, and folds a folded name to itself', async () => {
    expect(await fold([null])).toEqual([null]);
    const once = (await fold(cases.map(([input]) => input))) as string[];
    expect(await fold(once)).toEqual(once);
  });
});

describe('indexes on the folded keys', () => {
  let ws: string;
  beforeAll(async () => {
    // A workspace of 2,000 patients, analysed, so the planner weighs the indexes on real statistics.
    ws = (await createWorkspace(t)).id;
    await withTenant(t.app.atrium.db, { workspaceId: ws }, async (tx) => {
      await tx.execute(
        sql`INSERT INTO patients (workspace_id, id, given_name, family_name)
            SELECT ${ws}, 'pat_' || lpad(g::text, 6, '0'), 'Given' || g, 'Family' || g FROM generate_series(1, 2000) g`,
      );
      await tx.execute(sql`ANALYZE patients`);
    });
  });

  async function plan(query: ReturnType<typeof sql>): Promise<string> {
    return withTenant(t.app.atrium.db, { workspaceId: ws }, async (tx) => {
      await tx.execute(sql`SET LOCAL enable_seqscan = off`);
      const rows = await queryRows<Record<string, string>>(tx, sql`EXPLAIN ${query}`);
      return rows.map((r) => Object.values(r)[0]).join('\n');
    });
  }

  it('serve the duplicate check and family names starting with a term', async () => {
    expect(
      await plan(
        sql`SELECT * FROM patients WHERE workspace_id = ${ws} AND given_name_key = 'given7' AND family_name_key = 'family7' AND date_of_birth = '1966-02-11'`,
      ),
    ).toContain('patients_name_key_idx');
    expect(
      await plan(sql`SELECT * FROM patients WHERE workspace_id = ${ws} AND family_name_key LIKE 'family12%'`),
    ).toContain('patients_name_key_idx');
  });
});

describe.skipIf(!TEST_SERVER_URL)('atrium_fold_name on a "C" locale database', () => {
  it('folds Latin capitals alike, although lower() there knows only ASCII', async () => {
    const migration = readFileSync(new URL('../../../drizzle/0036_patient_name_fold.sql', import.meta.url), 'utf8');
    const create = migration.slice(migration.indexOf('CREATE FUNCTION'), migration.indexOf('--> statement-breakpoint'));
    const name = `atrium_fold_c_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
      const url = new URL(TEST_SERVER_URL as string);
      url.pathname = `/${name}`;
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        await c.query(create);
        const cases = [
          ['ÆBELØ', 'aebelo'],
          ['ŁÓDŹ', 'lodz'],
          ['STRAẞE', 'strasse'],
          ['ŒUVRE ÞÓRA', 'oeuvre thora'],
          ['ĐURĐEVIĆ', 'durdevic'],
          ['José Müller', 'jose muller'],
        ];
        const { rows } = await c.query<{ f: string }>(
          `SELECT atrium_fold_name(v) AS f FROM unnest($1::text[]) WITH ORDINALITY AS x(v, i) ORDER BY i`,
          [cases.map(([input]) => input)],
        );
        expect(rows.map((r) => r.f)).toEqual(cases.map(([, folded]) => folded));
      } finally {
        await c.end();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    }
  });
});
