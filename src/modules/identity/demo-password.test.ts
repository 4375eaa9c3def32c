import { describe, expect, it } from 'vitest';
import { assertStrongPassword } from '../../platform/auth/password-policy.js';
import { DEMO_PASSWORD, DEMO_USERS } from './seed.js';

// The seed sets the demo accounts' password from a hash made once, without the policy check every
// request goes through: this keeps the published password within that policy for each account.
describe('the demo password', () => {
  it('passes the password policy for every demo account', async () => {
    for (const user of DEMO_USERS) {
      await expect(
        assertStrongPassword(DEMO_PASSWORD, { email: user.email, name: user.name }),
      ).resolves.toBeUndefined();
    }
  });

  it('is refused when anyone tries to set it: it is published', async () => {
    for (const published of [DEMO_PASSWORD, DEMO_PASSWORD.toUpperCase(), ` ${DEMO_PASSWORD} `]) {
      await expect(
        assertStrongPassword(published, { email: 'new@clinic.example', published: [DEMO_PASSWORD] }),
      ).rejects.toMatchObject({ code: 'weak_password', message: expect.stringContaining('published') });
    }
  });

  it('would be refused if it were guessable (the check is real)', async () => {
    await expect(assertStrongPassword('riverside-2026', { email: DEMO_USERS[0].email })).rejects.toMatchObject({
      code: 'weak_password',
    });
  });
});
