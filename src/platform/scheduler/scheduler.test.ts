import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '../../../test/helpers/db.js';
import { Scheduler } from './scheduler.js';

let testDb: TestDatabase;
const log = { error: () => undefined } as never;

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => testDb?.drop());

describe('scheduler leases', () => {
  it('runs a periodic job once per interval across instances', async () => {
    const a = new Scheduler(testDb.database, log);
    const b = new Scheduler(testDb.database, log);
    let runs = 0;
    const job = { name: 'probe', intervalMs: 60_000, run: async () => void runs++ };
    const results = await Promise.all([a.runIfLeased(job), b.runIfLeased(job), a.runIfLeased(job), b.runIfLeased(job)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(runs).toBe(1);
  });

  it('runs again once the interval has passed, and keeps going when a run fails', async () => {
    const s = new Scheduler(testDb.database, log);
    let runs = 0;
    const job = {
      name: 'short',
      intervalMs: 200,
      run: async () => {
        runs++;
        throw new Error('probe failed');
      },
    };
    expect(await s.runIfLeased(job)).toBe(true);
    expect(await s.runIfLeased(job)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(await s.runIfLeased(job)).toBe(true);
    expect(runs).toBe(2);
  });

  it('never runs a job twice at once, across instances or on one, and runs it again only after a long run ends', async () => {
    // A run (1.5 s) outlasts its interval (400 ms) and the lease of a run (300 ms): the heartbeat must keep it.
    // Two instances: on the server each with a pool of its own; PGlite has one connection for both.
    const other = TEST_SERVER_URL ? await testDb.openAnother() : testDb.database;
    const a = new Scheduler(testDb.database, log, { runLeaseMs: 300 });
    const b = new Scheduler(other, log, { runLeaseMs: 300 });
    let concurrent = 0;
    let maxConcurrent = 0;
    const runs: { start: number; end: number }[] = [];
    const job = {
      name: 'long',
      intervalMs: 400,
      run: async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        const start = Date.now();
        await new Promise((r) => setTimeout(r, 1500));
        runs.push({ start, end: Date.now() });
        concurrent--;
      },
    };
    try {
      a.every(job);
      b.every(job);
      await new Promise((r) => setTimeout(r, 4000));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect(maxConcurrent).toBe(1);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.length).toBeLessThanOrEqual(3);
    runs.sort((x, y) => x.start - y.start);
    for (let i = 1; i < runs.length; i++) expect(runs[i].start).toBeGreaterThanOrEqual(runs[i - 1].end);
  });
});
