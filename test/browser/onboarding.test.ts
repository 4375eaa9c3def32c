// A new clinic's first day (UX review of onboarding): the welcome link shows whose account it is and hands the
// address to password managers; an account without a password chooses its first one from "Forgot password?" in
// words that say so; an admin resends a pending invitation from Members. docs/identity.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

describe('onboarding', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  /** Links to `path` mailed to `address` (the mailbox lists in no set order), once at least `count` arrived. */
  async function linksTo(address: string, path: string, count = 1): Promise<string[]> {
    for (let i = 0; i < 50; i++) {
      const response = await fetch(`${harness.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(address)}`);
      const found = ((await response.json()) as { items: { text: string }[] }).items
        .map((m) => new RegExp(`https?://\\S+(${path}\\?token=\\S+)`).exec(m.text)?.[1])
        .filter((link): link is string => !!link);
      if (found.length >= count) return found;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`no ${path} link to ${address}`);
  }

  const overflow = (page: import('playwright-core').Page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  it('the welcome link names the account and gives password managers its login; on a phone too', async () => {
    const email = `welcome-${uniqueSuffix()}@example.test`;
    await harness.addMember(workspace.id, { email, name: 'Wren Welcome', role: 'member' });
    const [link] = await linksTo(email, '/accept-invitation');
    const page = await harness.newPage({ phone: true });
    await page.goto(link);
    const form = page.getByTestId('accept-invitation-form');
    await form.waitFor();
    // The address the new account is for, in words and as the form's username.
    expect(await page.locator('main').textContent()).toContain(`You sign in with ${email}.`);
    const username = form.locator('input[autocomplete="username"]');
    expect(await username.count()).toBe(1);
    expect(await username.inputValue()).toBe(email);
    expect(await username.getAttribute('readonly')).not.toBeNull();
    expect(await form.locator('input[autocomplete="new-password"]').count()).toBe(2);
    expect(await axeProblems(page, 'main')).toEqual([]);
    expect(await overflow(page)).toBeLessThanOrEqual(0);

    const password = `Juniper-quay-${uniqueSuffix()}-lantern`;
    await page.getByLabel('Password').first().fill(password);
    await page.getByLabel('Password again').fill(password);
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByTestId('user-menu').waitFor();
  });

  it('"Forgot password?" for an account that never had one: choose your password, nothing about resets', async () => {
    const email = `first-${uniqueSuffix()}@example.test`;
    await harness.addMember(workspace.id, { email, name: 'Fern First', role: 'member' });
    const asked = await fetch(`${harness.baseUrl}/api/v1/auth/password-reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(asked.status).toBe(202);
    const [link] = await linksTo(email, '/reset-password');
    const page = await harness.newPage({ phone: true });
    await page.goto(link);
    await page.getByTestId('reset-form').waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose your password');
    const main = page.locator('main');
    expect(await main.textContent()).toContain(`Your account ${email} has no password yet.`);
    expect(await main.textContent()).not.toMatch(/new password|reset/i);
    expect(await page.locator('input[autocomplete="username"]').inputValue()).toBe(email);
    expect(await axeProblems(page, 'main')).toEqual([]);
    expect(await overflow(page)).toBeLessThanOrEqual(0);

    const password = `Tamarind-pier-${uniqueSuffix()}-meadow`;
    await page.getByLabel('Password').first().fill(password);
    await page.getByLabel('Password again').fill(password);
    await page.getByRole('button', { name: 'Set password' }).click();
    const done = page.getByTestId('reset-done');
    await done.waitFor();
    expect(await done.textContent()).toContain('Your password is set');
    // As for any reset link, earlier tokens are revoked (contract §2a), and the page says so.
    expect(await done.textContent()).toContain('any API token made for your account before was signed out');
  });

  it('an admin resends a pending invitation from Members: a toast, the focus stays, only the new link works', async () => {
    const email = `resend-${uniqueSuffix()}@example.test`;
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/members');
    await page.getByTestId('members-table').waitFor();
    await page.getByTestId('invite-member').click();
    const dialog = page.getByTestId('invite-dialog');
    // The provider box says what the flag does (every member sees patients).
    expect(await dialog.getByTestId('field-isProvider').textContent()).toContain(
      'Provider (appointments can be booked with them)',
    );
    await dialog.getByLabel('E-mail').fill(email);
    await dialog.getByLabel('Name').fill('Rosa Resend');
    await dialog.getByTestId('send-invitation').click();
    await dialog.waitFor({ state: 'detached' });
    const [first] = await linksTo(email, '/accept-invitation');

    const row = page.getByTestId('member-row').filter({ hasText: 'Rosa Resend' });
    const resend = row.getByTestId('member-resend');
    await resend.waitFor();
    expect(await resend.getAttribute('aria-label')).toBe('Resend the invitation to Rosa Resend');
    await resend.focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-sonner-toast]').filter({ hasText: 'Invitation sent again' }).waitFor();
    expect(
      await page.locator('[data-sonner-toast]').filter({ hasText: 'Invitation sent again' }).textContent(),
    ).toContain('the link in the earlier e-mail no longer works');
    await expect.poll(() => resend.evaluate((el) => el === document.activeElement), { timeout: 5_000 }).toBe(true);
    const links = await linksTo(email, '/accept-invitation', 2);
    const second = links.find((l) => l !== first) as string;

    const old = await harness.newPage();
    await old.goto(first);
    await old.getByTestId('invitation-ended').waitFor();
    const fresh = await harness.newPage();
    await fresh.goto(second);
    await fresh.getByTestId('accept-invitation-form').waitFor();

    // On a phone the row (a card there) keeps Resend and Remove in reach, nothing sideways.
    const phone = await harness.newPage({ phone: true });
    await signIn(phone, workspace.admin.email, workspace.admin.password);
    await phone.goto('/admin/members');
    await phone.getByTestId('members-table').waitFor();
    await phone.getByTestId('member-row').filter({ hasText: 'Rosa Resend' }).getByTestId('member-resend').waitFor();
    expect(await overflow(phone)).toBeLessThanOrEqual(0);
    expect(await axeProblems(phone, 'main')).toEqual([]);
  });
});
