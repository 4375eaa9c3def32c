// Start-up time and idle memory of `npm start` on the embedded database (issue 9 §4): a first start
// (create, migrate and seed a new data dir) and a warm restart, each timed to the first 200 from
// /readyz, then left idle and measured (resident memory of the service process, and of the whole
// process tree with npm and its shell). The floor is a bare Node HTTP server (plain node, as npm
// start runs the built server), timed to its first answer in the same run.
//
// BENCH_IDLE_SECONDS (default 20) sets how long each start idles before memory is read.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unusedPort } from '../test/helpers/ports.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 20);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Milliseconds until `url` answers 200 (polling every 50 ms), or throws after `timeoutMs`. */
async function untilReady(url: string, started: number, child: ChildProcess, timeoutMs = 120_000): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the process exited (${child.exitCode}) before answering`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return performance.now() - started;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Resident memory (MB) of each process in the tree under `pid`, keyed by pid, with its command line. */
function tree(pid: number): { pid: number; rssMb: number; command: string }[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,rss=,args='], { encoding: 'utf8' });
  const rows = out
    .trim()
    .split('\n')
    .map((line) => {
      const [p, pp, rss, ...args] = line.trim().split(/\s+/);
      return { pid: Number(p), ppid: Number(pp), rssMb: Number(rss) / 1024, command: args.join(' ') };
    });
  const found: typeof rows = [];
  const walk = (parent: number) => {
    for (const row of rows.filter((r) => r.ppid === parent)) {
      found.push(row);
      walk(row.pid);
    }
  };
  const self = rows.find((r) => r.pid === pid);
  if (self) found.push(self);
  walk(pid);
  return found;
}

async function stop(child: ChildProcess): Promise<void> {
  const running = () => child.exitCode === null && child.signalCode === null;
  if (!running()) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
  if (running()) process.kill(-child.pid!, 'SIGKILL');
}

interface Start {
  readyMs: number;
  serviceMb: number;
  treeMb: number;
}

async function startAtrium(dataDir: string, port: number): Promise<Start> {
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), ATRIUM_DATA_DIR: dataDir, ATRIUM_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  try {
    const readyMs = await untilReady(`http://127.0.0.1:${port}/readyz`, started, child);
    await sleep(idleSeconds * 1000);
    const processes = tree(child.pid!);
    const service = processes.find((p) => p.command.startsWith('node ') && p.command.includes('.run/src/main.js'));
    return {
      readyMs,
      serviceMb: service?.rssMb ?? Number.NaN,
      treeMb: processes.reduce((sum, p) => sum + p.rssMb, 0),
    };
  } finally {
    await stop(child);
  }
}

async function floor(port: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-floor-'));
  const file = join(dir, 'server.mjs');
  writeFileSync(
    file,
    `import { createServer } from 'node:http';
     createServer((_req, res) => res.end('ok')).listen(${port}, '127.0.0.1');`,
  );
  const started = performance.now();
  const child = spawn(process.execPath, [file], { stdio: 'ignore', detached: true });
  try {
    return await untilReady(`http://127.0.0.1:${port}/`, started, child);
  } finally {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  // The web app and the server are built once beforehand, so both starts time the service itself.
  execFileSync('node', ['scripts/build-web-if-changed.mjs'], { cwd: root, stdio: 'ignore' });
  execFileSync('node', ['scripts/build-server-if-changed.mjs'], { cwd: root, stdio: 'ignore' });
  const dataDir = mkdtempSync(join(tmpdir(), 'atrium-startup-'));
  try {
    const floorMs = await floor(await unusedPort());
    const first = await startAtrium(dataDir, await unusedPort());
    // The first start seeded the demo: a restart must find it and not seed again.
    const seeded = readFileSync(join(dataDir, 'pglite', 'PG_VERSION'), 'utf8').trim();
    const warm = await startAtrium(dataDir, await unusedPort());
    const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `\nStart-up and idle memory — npm start on the embedded database (PostgreSQL ${seeded}), idle ${idleSeconds} s`,
    );
    console.table({
      'floor: bare Node server': { ready: fmt(floorMs), 'service MB': '', 'process tree MB': '' },
      'first start (create, migrate, seed)': {
        ready: fmt(first.readyMs),
        'service MB': first.serviceMb.toFixed(0),
        'process tree MB': first.treeMb.toFixed(0),
      },
      'warm restart': {
        ready: fmt(warm.readyMs),
        'service MB': warm.serviceMb.toFixed(0),
        'process tree MB': warm.treeMb.toFixed(0),
      },
    });
    const line = (ok: boolean, text: string) => console.log(`${ok ? 'MET ' : 'MISS'}  ${text}`);
    line(
      first.readyMs < 10_000,
      `first start ${fmt(first.readyMs)} (target < 10 s; ${(first.readyMs / floorMs).toFixed(1)}× the floor)`,
    );
    line(
      warm.readyMs < 3_000,
      `warm start ${fmt(warm.readyMs)} (target < 3 s; ${(warm.readyMs / floorMs).toFixed(1)}× the floor)`,
    );
    line(first.serviceMb < 300, `idle after a first start ${first.serviceMb.toFixed(0)} MB (target < 300 MB)`);
    line(warm.serviceMb < 300, `idle after a restart ${warm.serviceMb.toFixed(0)} MB (target < 300 MB)`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
