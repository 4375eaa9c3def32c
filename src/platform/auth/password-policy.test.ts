import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { assertStrongPassword } from './password-policy.js';

async function refusal(password: string, context = {}): Promise<AppError | undefined> {
  try {
    await assertStrongPassword(password, context);
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

describe('password policy (NIST 800-63B length, zxcvbn-ts guessability)', () => {
  it('refuses fewer than 12 characters with 422 weak_password', async () => {
    const err = await refusal('x7#Qv9!mZ2p');
    expect(err).toMatchObject({ code: 'weak_password', status: 422 });
    expect(err?.message).toMatch(/at least 12 characters/);
    expect(await refusal('')).toMatchObject({ code: 'weak_password' });
  });

  it('refuses common and easily guessed passwords of any length', async () => {
    for (const password of ['password1234', 'qwertyuiop123', 'aaaaaaaaaaaaaaaa', 'iloveyou2026', 'abcdefghijklmnop']) {
      const err = await refusal(password);
      expect(err, password).toMatchObject({ code: 'weak_password', status: 422 });
      expect(err?.message.length, password).toBeGreaterThan(10);
    }
  });

  it("refuses a password made of the account's own e-mail or name", async () => {
    const err = await refusal('margaretthatcher', {
      email: 'margaret.thatcher@example.test',
      name: 'Margaret Thatcher',
    });
    expect(err).toMatchObject({ code: 'weak_password' });
  });

  it('accepts long unguessable passwords without composition rules, up to 200 characters', async () => {
    for (const password of ['kettle-orbit-maple-91', 'correct horse battery staple', 'wq8 zmv plok tuna rover']) {
      expect(await refusal(password), password).toBeUndefined();
    }
    expect(await refusal(`${'kettle-orbit-maple-91 '.repeat(9)}`.slice(0, 200))).toBeUndefined();
    expect(await refusal('k'.repeat(201))).toMatchObject({ code: 'weak_password' });
  });
});
