import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
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
});
