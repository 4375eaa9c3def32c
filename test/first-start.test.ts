// The service as `npm start` runs it (the server built to .run/ by scripts/build-server-if-changed.mjs,
// run by plain Node) on a new embedded data dir: it creates, migrates and seeds the database, reopens
// it on a fresh instance (so seeding's memory is let go), serves the demo, and on SIGTERM shuts down
// cleanly; a restart finds the demo and does not seed it again.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SERVER_URL } from './helpers/db.js';
import { unusedPort } from './helpers/ports.js';

const root = join(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'atrium-first-start-'));
// A failed assertion between a start and its stop must not leave the service running after the run.
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const port = await unusedPort();
  let output = '';
  const child = spawn(process.execPath, ['--expose-gc', join(root, '.run', 'src', 'main.js')], {
    env: { ...process.env, PORT: String(port), ATRIUM_DATA_DIR: dataDir, ATRIUM_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    // The banner is printed once the background work has started, just after the port opens.
    if (ready && output.includes('Atrium is running at')) return { child, base, output: () => output };
    if (Date.now() > deadline) throw new Error(`not ready: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

const signIn = (base: string) =>
  fetch(`${base}/api/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@riverside.example', password: 'atrium-demo-2026' }),
  });

describe('npm start on a new embedded data dir', () => {
  // About the embedded database only: the run on the PostgreSQL server leaves it out.
  it.skipIf(TEST_SERVER_URL)(
    'seeds the demo, serves it from the reopened database, stops cleanly, and restarts without seeding again',
    async () => {
      const builder = join(root, 'scripts', 'build-server-if-changed.mjs');
      execFileSync(process.execPath, [builder], { cwd: root });
      const stamp = join(root, '.run', '.build-hash');
      const builtAt = statSync(stamp).mtimeMs;
      // Nothing changed: the second call builds nothing.
      execFileSync(process.execPath, [builder], { cwd: root });
      expect(statSync(stamp).mtimeMs).toBe(builtAt);

      const first = await start();
      expect(first.output()).toContain('Demo data:       created on this start');
      const res = await signIn(first.base);
      expect(res.status).toBe(200);
      const cookie = String(res.headers.get('set-cookie')).split(';')[0];
      const patients = await fetch(`${first.base}/api/v1/patients?limit=5`, { headers: { cookie } });
      expect(patients.status).toBe(200);
      expect(((await patients.json()) as { items: unknown[] }).items.length).toBeGreaterThan(0);
      expect(await stop(first.child)).toBe(0);

      const second = await start();
      expect(second.output()).not.toContain('Demo data:');
      expect((await signIn(second.base)).status).toBe(200);
      expect(await stop(second.child)).toBe(0);
    },
    180_000,
  );
});
