/**
 * The admin area's review findings: a workspace switch under the settings form, token revokes that fail, leaving a
 * workspace yourself, cancelling and repeating an invitation, plain length errors, telling tokens apart, the
 * provider switch's contrast and the invite dialog's first focus.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

describe('admin area review', () => {
  let harness: BrowserHarness;
  let riverside: TestWorkspace;
  let harbor: TestWorkspace;

  /** The signed-in user's workspaces by id, with their names, as the API has them now. */
  const workspaceNames = (page: Page) =>
    page.evaluate(async () => {
      const me = (await (await fetch('/api/v1/me')).json()) as { workspaces: { id: string; name: string }[] };
      return Object.fromEntries(me.workspaces.map((w) => [w.id, w.name]));
    });

  const switchTo = async (page: Page, workspace: TestWorkspace) => {
    await page.getByLabel('Switch workspace').selectOption(workspace.id);
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(workspace.name);
  };

  beforeAll(async () => {
    harness = await startHarness();
    riverside = await harness.createWorkspace({ name: `Riverside ${uniqueSuffix()}`, tier: 'standard' });
    harbor = await harness.createWorkspace({ name: `Harbor ${uniqueSuffix()}`, tier: 'standard' });
    // Riverside's admin is an admin of Harbor too.
    await harness.addMember(harbor.id, { email: riverside.admin.email, name: riverside.admin.name, role: 'admin' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('settings show the current workspace after a switch, and a save never renames another one', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    await page.goto('/admin/settings');
    const field = page.getByLabel('Workspace name');
    await expect.poll(() => field.inputValue()).toBe(riverside.name);

    // Switched here: the form shows Harbor's name, and saving renames Harbor with what was typed for it.
    await switchTo(page, harbor);
    await expect.poll(() => field.inputValue()).toBe(harbor.name);
    const renamed = `${harbor.name} (PT)`;
    await field.fill(renamed);
    await page.getByTestId('save-settings').click();
    await page.getByText(`The workspace is now called ${renamed}.`).first().waitFor();
    expect(await workspaceNames(page)).toMatchObject({ [riverside.id]: riverside.name, [harbor.id]: renamed });
    harbor.name = renamed;

    // Switched in another tab (the same session): this tab's save renames nothing, says why, and shows the
    // workspace the session is in now.
    const other = await page.context().newPage();
    await other.goto('/patients');
    await switchTo(other, riverside);
    await field.fill('Typed for Harbor');
    await page.getByTestId('save-settings').click();
    await expect.poll(() => page.getByTestId('form-error').textContent()).toContain('switched to another workspace');
    await expect.poll(() => field.inputValue()).toBe(riverside.name);
    expect(await workspaceNames(page)).toMatchObject({ [riverside.id]: riverside.name, [harbor.id]: harbor.name });
    await other.close();
  });
});
