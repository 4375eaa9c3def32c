import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

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
