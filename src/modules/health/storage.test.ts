// The S3 object store over HTTP against the S3 emulator (SigV4 checked on every request), and the
// storage probe using it when ATRIUM_S3_* are configured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { S3_EMULATOR_CREDENTIALS } from '../../emulators/s3/routes.js';
import { s3ObjectStore } from '../../platform/storage/s3.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const settings = () => ({
  endpoint: `${t.baseUrl}/_emulators/s3`,
  bucket: 'atrium-test',
  region: 'eu-west-1',
  ...S3_EMULATOR_CREDENTIALS,
});

describe('S3 object store', () => {
  it('puts, gets and deletes signed objects; a wrong secret is SignatureDoesNotMatch; a missing key is undefined', async () => {
    const store = s3ObjectStore(settings());
    const body = Buffer.from('scanned referral, page 1');
    await store.put('referrals/2026/a b.pdf', body);
    expect((await store.get('referrals/2026/a b.pdf'))?.equals(body)).toBe(true);
    await store.delete('referrals/2026/a b.pdf');
    expect(await store.get('referrals/2026/a b.pdf')).toBeUndefined();
    const forged = s3ObjectStore({ ...settings(), secretAccessKey: 'not-the-secret' });
    await expect(forged.put('x', Buffer.from('x'))).rejects.toThrow(/SignatureDoesNotMatch/);
  });

  it('the storage probe writes through S3 when it is configured, and fails while S3 fails', async () => {
    t.app.atrium.config.s3 = settings();
    try {
      const cron = () =>
        t.request({
          method: 'GET',
          url: '/api/v1/cron/services-health',
          headers: { authorization: `Bearer ${t.config.cronSecret}` },
        });
      const [ok] = (await cron()).json().checks['storage:write'];
      expect(ok).toMatchObject({ status: 'pass', output: 'S3 bucket atrium-test' });
      await t.request({
        method: 'POST',
        url: '/_emulators/s3/faults',
        payload: { operation: 'put', status: 500, times: 3 },
      });
      const [failed] = (await cron()).json().checks['storage:write'];
      expect(failed.status).toBe('fail');
      expect(failed.output).toMatch(/InternalError/);
    } finally {
      t.app.atrium.config.s3 = undefined;
    }
  });
});
