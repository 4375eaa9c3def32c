// Helpers the server benchmarks share: a fresh database on the PostgreSQL server, the servers under
// test in a child process, JSON calls to them, and autocannon as a promise.
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

/** Runs one statement as the connecting (owner) role, e.g. CREATE / DROP DATABASE. */
export async function adminQuery(serverUrl: string, sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
}

/** A JSON request to the app under test; throws with the body on a non-2xx answer. */
export async function callJson<T>(
  base: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

export function runAutocannon(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** Node flags for a benchmark's server child: tsx, and with BENCH_PROFILE=<dir> a V8 CPU profile written there. */
export function serverExecArgv(): string[] {
  const dir = process.env.BENCH_PROFILE;
  return ['--import', 'tsx', ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [])];
}

/** A fresh database on the server for one benchmark run, dropped afterwards. */
export async function createBenchDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `atrium_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((err) => console.error(err)),
  };
}

/**
 * The benchmark script itself, run again as `<script> <role>` in a child process (the servers under
 * test, so the load generator does not share their event loop). Resolves with the child's first
 * message (its URLs); `stop()` asks it to close (message 'stop') and waits for it to exit.
 */
export async function forkBenchChild<Ready>(
  scriptUrl: string,
  role: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; ready: Ready; stop(): Promise<void> }> {
  const child = fork(fileURLToPath(scriptUrl), [role], { execArgv: serverExecArgv(), env: { ...process.env, ...env } });
  const stop = async () => {
    if (!child.connected) return void child.kill();
    child.send('stop');
    await new Promise((resolve) => child.once('exit', resolve));
  };
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      child.once('message', (m) => resolve(m as Ready));
      child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
    });
    return { child, ready, stop };
  } catch (err) {
    child.kill();
    throw err;
  }
}
