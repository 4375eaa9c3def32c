// The service's main.ts as a process of its own (as `npm run dev` runs it: Node with tsx's loader), for tests of
// what only a whole process shows: start-up, signals, exit codes. Not the build in .run/ that `npm start` runs:
// scripts/build-server-if-changed.mjs replaces .run/ whenever a source changed, which would pull the files from
// under a child running from it.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { unusedPort } from './ports.js';

const root = join(import.meta.dirname, '..', '..');

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  base: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();

/** SIGKILLs every server a test started and left running (call from afterAll). */
export function killServerProcesses(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/**
 * Starts src/main.ts and resolves once /readyz answers 200 and the banner is printed; rejects when it
 * exits first or is not ready within `readyWithinMs`.
 */
export async function startServerProcess(
  env: Record<string, string | undefined>,
  { readyWithinMs = 120_000 }: { readyWithinMs?: number } = {},
): Promise<ServerProcess> {
  const port = await unusedPort();
  let output = '';
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, ATRIUM_LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyWithinMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    // The banner is printed once the background work has started, just after the port opens.
    if (ready && output.includes('Atrium is running at')) return { child, port, base, output: () => output, exited };
    if (Date.now() > deadline) throw new Error(`not ready: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
