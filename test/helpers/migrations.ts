// Migration tests: a copy of the migrations folder that stops before (or at) one migration, so a test
// can fill a database as an older release left it and then apply the migration under test.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_FOLDER } from '../../src/platform/db/client.js';

const dirs: string[] = [];

/** The migrations before `tag`, or up to and including it. */
export function migrationsUpTo(tag: string, include: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-migrations-'));
  dirs.push(dir);
  cpSync(MIGRATIONS_FOLDER, dir, { recursive: true, filter: (src) => !src.includes('.vitest-tmp') });
  const journalPath = join(dir, 'meta/_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { idx: number; tag: string }[] };
  const idx = journal.entries.find((e) => e.tag === tag)?.idx;
  if (idx === undefined) throw new Error(`${tag} is not in the journal`);
  journal.entries = journal.entries.filter((e) => (include ? e.idx <= idx : e.idx < idx));
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

/** Removes the folders made by migrationsUpTo (call in afterAll). */
export function removeMigrationCopies(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
