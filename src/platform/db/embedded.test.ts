import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './client.js';
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
    await first.close();

    steps.length = 0;
    const again = await openDatabase({ dataDir: join(dir, 'pglite'), step });
    expect(steps).toEqual(['Running database migrations']);
    await again.close();
  });
});
