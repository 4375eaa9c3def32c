// scripts/build-server-if-changed.mjs (what `npm start` runs first) run several times at once on one checkout, as
// two `npm start` or two test files do: each build is made apart and put in place whole, so every run succeeds
// and .run/ is one complete build. A copy of the sources in a temporary directory stands for the checkout, so
// the repository's own .run/ (which other tests run) is left alone.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SERVER_URL } from './helpers/db.js';

const root = join(import.meta.dirname, '..');
const checkout = mkdtempSync(join(tmpdir(), 'atrium-build-'));
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

function copyCheckout() {
  for (const path of ['src', 'packages/skill-sdk/src', 'scripts/build-server-if-changed.mjs']) {
    cpSync(join(root, path), join(checkout, path), { recursive: true });
  }
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(checkout, file));
  for (const link of ['node_modules', 'drizzle', 'web']) symlinkSync(join(root, link), join(checkout, link));
}

const runBuilder = () =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [join(checkout, 'scripts', 'build-server-if-changed.mjs'), '--force'], {
      cwd: checkout,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('exit', (code) => resolve({ code, output }));
  });

describe('building the server for npm start', () => {
  // A build script's behaviour, not the database's: the run on the PostgreSQL server leaves it out.
  it.skipIf(TEST_SERVER_URL)(
    'three builds at once all succeed and leave one whole build in place',
    async () => {
      copyCheckout();
      const runs = await Promise.all([runBuilder(), runBuilder(), runBuilder()]);
      for (const run of runs) expect(run, run.output).toMatchObject({ code: 0 });

      const out = join(checkout, '.run');
      expect(existsSync(join(out, 'src', 'main.js'))).toBe(true);
      expect(readFileSync(join(out, '.build-hash'), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
      // Non-TypeScript sources copied, the links in place, no test files.
      expect(existsSync(join(out, 'package.json'))).toBe(true);
      expect(existsSync(join(out, 'drizzle'))).toBe(true);
      expect(readdirSync(join(out, 'src')).some((file) => file.endsWith('.test.js'))).toBe(false);
      // Nothing of the builds' own directories is left beside it.
      expect(readdirSync(checkout).filter((entry) => entry.startsWith('.run.'))).toEqual([]);

      // Unchanged sources: a run without --force builds nothing and keeps the stamp.
      const stamp = readFileSync(join(out, '.build-hash'), 'utf8');
      const again = await new Promise<number | null>((resolve) =>
        spawn(process.execPath, [join(checkout, 'scripts', 'build-server-if-changed.mjs')], { cwd: checkout }).on(
          'exit',
          resolve,
        ),
      );
      expect(again).toBe(0);
      expect(readFileSync(join(out, '.build-hash'), 'utf8')).toBe(stamp);
    },
    120_000,
  );
});
