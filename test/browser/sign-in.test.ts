import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

describe('sign in', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'advanced' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('shows an error for a wrong password and stays on the sign-in page', async () => {
    const page = await harness.newPage();
    await page.goto('/patients');
    await page.getByLabel('E-mail').fill(workspace.admin.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();

    const error = page.getByTestId('sign-in-error');
    await error.waitFor();
    expect(await error.getAttribute('role')).toBe('alert');
    expect((await error.textContent())?.trim()).not.toBe('');
    expect(await page.getByTestId('workspace-name').count()).toBe(0);
  });

  it('says in words when the e-mail is not an address; the reset dialog keeps the focus after sending', async () => {
    const page = await harness.newPage();
    await page.goto('/patients');
    await page.getByLabel('E-mail').fill('notanemail');
    await page.getByLabel('Password').fill('whatever-it-is');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('sign-in-error').textContent()).toContain('name@example.com');

    await page.getByTestId('forgot-password').click();
    const dialog = page.getByTestId('forgot-dialog');
    await dialog.getByTestId('send-reset').click();
    await dialog.getByLabel('E-mail').fill(workspace.admin.email);
    await dialog.getByTestId('send-reset').click();
    await dialog.getByTestId('reset-requested').waitFor();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('reset-requested');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  it('asks someone removed and invited again for their own password once, with a way to reset it', async () => {
    const email = `ren-${uniqueSuffix()}@example.test`;
    const password = `Copper-meadow-${uniqueSuffix()}-kite`;
    const { userId } = await harness.addMember(workspace.id, { email, name: 'Ren Turner', role: 'member', password });
    // The admin removes Ren, then invites the same address again.
    const admin = await harness.newPage();
    await signIn(admin, workspace.admin.email, workspace.admin.password);
    const call = (method: string, path: string, body?: unknown) =>
      admin.evaluate(
        async ([m, p, b]) => {
          const init: RequestInit = { method: m as string, headers: { 'x-requested-with': 'fetch' } };
          if (b) init.body = JSON.stringify(b);
          if (b) init.headers = { 'x-requested-with': 'fetch', 'content-type': 'application/json' };
          return (await fetch(`/api/v1${p}`, init)).status;
        },
        [method, path, body] as const,
      );
    expect(await call('DELETE', `/members/${userId}`)).toBe(204);
    expect(await call('POST', '/members/invitations', { email, name: 'Ren Turner', role: 'member' })).toBe(201);
    let link = '';
    for (let i = 0; i < 50 && !link; i++) {
      const mails = await fetch(`${harness.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(email)}`);
      const { items } = (await mails.json()) as { items: { text: string }[] };
      const match = /https?:\/\/\S+(\/accept-invitation\?token=\S+)/.exec(items[0]?.text ?? '');
      if (match) link = match[1];
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(link).not.toBe('');

    const page = await harness.newPage();
    await page.goto(link);
    await page.getByTestId('accept-invitation-form').waitFor();
    // Asked once for the password Ren already has, not to choose one for a new account.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Join ${workspace.name} on Atrium`);
    await page.getByText(`Enter your password to join ${workspace.name}.`).waitFor();
    expect(await page.locator('input[type="password"]').count()).toBe(1);
    expect(await page.getByText('Choose a password for your new account').count()).toBe(0);
    expect(await page.getByLabel('Password again').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Create my account' }).count()).toBe(0);
    // Forgotten? The reset is offered right there.
    await page.getByTestId('forgot-password').waitFor();

    // A wrong password is said under the field, in words; the right one joins and signs in.
    const field = page.getByLabel('Your password');
    await field.fill('not-my-password-at-all');
    await page.getByRole('button', { name: 'Join the workspace' }).click();
    await expect
      .poll(() => page.getByTestId('field-error-password').textContent())
      .toContain('not the password of this account');
    await field.fill(password);
    await page.getByRole('button', { name: 'Join the workspace' }).click();
    await page.getByTestId('user-menu').waitFor();
    expect(await page.getByTestId('workspace-name').textContent()).toBe(workspace.name);
  });

  it("lands a provider on today's schedule (the day view), everyone else on Patients", async () => {
    const email = `provider-${uniqueSuffix()}@example.test`;
    const password = `Provider-${uniqueSuffix()}-pass-phrase`;
    await harness.addMember(workspace.id, {
      email,
      name: 'Dr. Pia Provider',
      role: 'member',
      password,
      isProvider: true,
    });
    const page = await harness.newPage();
    await signIn(page, email, password);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/calendar');
    expect(new URL(page.url()).searchParams.get('view')).toBe('day');
    await expect.poll(() => page.getByTestId('view-day').getAttribute('aria-current')).toBe('page');
  });

  it('signs in, shows the workspace and user, and signs out', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);

    expect(await page.getByTestId('workspace-name').textContent()).toBe(workspace.name);
    expect((await page.getByTestId('workspace-tier').textContent())?.toLowerCase()).toBe('advanced');
    expect(await page.getByTestId('user-name').textContent()).toBe(workspace.admin.name);
    expect(new URL(page.url()).pathname).toBe('/patients');

    // Admin links show for admins.
    await page.getByTestId('nav-admin-health').click();
    await page.getByTestId('health-components').waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/health');

    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByLabel('Password').waitFor();
    // The session is gone: a reload still shows the sign-in page.
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });
});
