// Two app instances on one PostgreSQL server share the delivery work: each attempt is sent once.
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createWorkspace } from '../../../test/helpers/factories.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../../test/helpers/https-receiver.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { closeSafeClient } from '../../platform/http/safe-client.js';
import { type Background, startBackground } from '../../workers.js';

const onServer = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);
let t: TestApp | undefined;
const receivers: HttpsReceiver[] = [];
const backgrounds: Background[] = [];

afterAll(async () => {
  await Promise.all(backgrounds.map((b) => b.stop()));
  await t?.close();
  await Promise.all(receivers.map((r) => r.close()));
  await closeSafeClient();
});

describe('several worker instances', () => {
  it.skipIf(!onServer)(
    'deliver each attempt exactly once between them',
    async () => {
      t = await createTestApp({ webhooks: { retryDelaysMs: [100], timeoutMs: 5000, allowCidrs: ['127.0.0.0/8'] } });
      const ws = await createWorkspace(t, { tier: 'enterprise' });
      for (let i = 0; i < 2; i++) receivers.push(await startHttpsReceiver());
      const endpoints: string[] = [];
      for (const r of receivers) {
        const res = await t.request({
          method: 'POST',
          url: '/api/v1/admin/webhooks',
          token: ws.admin.token,
          payload: { url: r.url, events: ['patient.created'] },
        });
        endpoints.push(res.json().id);
      }
      const second = await t.startInstance();
      backgrounds.push(await t.startBackground(), await startBackground(second.app));

      const events = 150;
      // Half the events are created through each instance.
      for (let i = 0; i < events; i++) {
        const res = await (i % 2 === 0 ? t.app : second.app).inject({
          method: 'POST',
          url: '/api/v1/patients',
          headers: { authorization: `Bearer ${ws.admin.token}` },
          payload: { givenName: 'Multi', familyName: `Instance ${i}` },
        });
        expect(res.statusCode).toBe(201);
      }
      // This test is about exactly-once, not speed: on a saturated machine 300 deliveries take a while.
      for (const r of receivers) await r.waitFor(events, 90_000);
      // Let any duplicate that was about to happen arrive before counting.
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const r of receivers) {
        const ids = r.requests.map((q) => q.headers['webhook-id']);
        expect(ids).toHaveLength(events);
        expect(new Set(ids).size).toBe(events);
      }
      const rows = await withSystem(t.database.db, (tx) =>
        queryRows<{ state: string; attempts: number; n: number }>(
          tx,
          sql`SELECT state, attempts, count(*)::int AS n FROM webhook_deliveries
             WHERE workspace_id = ${ws.id} GROUP BY state, attempts`,
        ),
      );
      expect(rows).toEqual([{ state: 'delivered', attempts: 1, n: events * endpoints.length }]);
      const [attempts] = await withSystem(t.database.db, (tx) =>
        queryRows<{ n: number }>(
          tx,
          sql`SELECT count(*)::int AS n FROM webhook_attempts WHERE workspace_id = ${ws.id}`,
        ),
      );
      expect(attempts.n).toBe(events * endpoints.length);
    },
    150_000,
  );
});
