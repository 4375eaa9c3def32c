import { fsyncSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, PGLITE_DURABLE_PARAMS } from './client.js';
import { DurableNodeFS } from './durable-fs.js';
import { queryRows } from './tenant.js';

const dir = mkdtempSync(join(tmpdir(), 'atrium-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the embedded database in a data directory', () => {
  it('is created and migrated on first open (in a worker thread), then reopened as it is', async () => {
    const steps: string[] = [];
    const step = <T>(label: string, fn: () => Promise<T>) => {
      steps.push(label);
      return fn();
    };
    const first = await openDatabase({ dataDir: join(dir, 'pglite'), step });
    expect(steps).toEqual(['Creating the embedded database', 'Running database migrations']);
    const settings = await queryRows<{ role: string; buffers: string }>(
      first.db,
      sql`SELECT current_user AS role, current_setting('shared_buffers') AS buffers`,
    );
    expect(settings).toEqual([{ role: 'atrium_app', buffers: '16MB' }]);
    const durability = await queryRows<{ fsync: string; method: string }>(
      first.db,
      sql`SELECT current_setting('fsync') AS fsync, current_setting('wal_sync_method') AS method`,
    );
    expect(durability).toEqual([{ fsync: 'on', method: 'fsync' }]);
    await first.close();

    steps.length = 0;
    const again = await openDatabase({ dataDir: join(dir, 'pglite'), step });
    expect(steps).toEqual(['Running database migrations']);
    await again.close();
  });

  it('flushes each commit to the disk before it is acknowledged; a read flushes nothing', async () => {
    const flushed: number[] = [];
    const client = await PGlite.create({
      fs: new DurableNodeFS(join(dir, 'pglite'), (fd) => {
        flushed.push(fd);
        fsyncSync(fd);
      }),
      startParams: PGLITE_DURABLE_PARAMS,
    });
    try {
      await client.exec('CREATE TABLE IF NOT EXISTS durable_check (id int PRIMARY KEY)');
      for (let i = 1; i <= 3; i++) {
        const before = flushed.length;
        await client.query('INSERT INTO durable_check VALUES ($1)', [i]);
        expect(flushed.length, `commit ${i}`).toBeGreaterThan(before);
      }
      const before = flushed.length;
      await client.query('SELECT count(*) FROM durable_check');
      expect(flushed.length).toBe(before);
    } finally {
      await client.close();
    }
  });
});
