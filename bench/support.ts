// Helpers the server benchmarks share: admin SQL on the PostgreSQL server, JSON calls to the app
// under test, and autocannon as a promise.
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
