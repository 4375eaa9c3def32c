// On a phone (390 x 844, a touch screen): toasts keep clear of the top bar (Menu, Search, Account) and go away by
// themselves after a tap; Enter in a message box makes a new line and Send sends.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

type Box = { x: number; y: number; width: number; height: number };
const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** The element's box once it has stopped moving (toasts slide in). */
async function settledBox(locator: Locator): Promise<Box> {
  let last = '';
  let box: Box | null = null;
  await expect
    .poll(async () => {
      box = await locator.boundingBox();
      const now = JSON.stringify(box);
      const still = box !== null && now === last;
      last = now;
      return still;
    })
    .toBe(true);
  return box as unknown as Box;
}

describe('on a phone', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
    page = await harness.newPage({ phone: true });
    await signIn(page, workspace.admin.email, workspace.admin.password);
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('a toast leaves the top bar free, has a close button of 24 px or more and goes by itself after a tap', async () => {
    expect(await page.evaluate(() => matchMedia('(pointer: coarse)').matches)).toBe(true);
    await page.goto('/admin/settings');
    const rename = async (name: string) => {
      await page.getByLabel('Workspace name').fill(name);
      await page.getByTestId('save-settings').tap();
      const toast = page.locator('[data-sonner-toast]').filter({ hasText: `The workspace is now called ${name}.` });
      await toast.waitFor();
      return toast;
    };
    const toast = await rename(`Phone clinic ${uniqueSuffix()}`);
    const toastBox = await settledBox(toast);
    const topbar = await page.locator('.topbar').boundingBox();
    expect(topbar).not.toBeNull();
    expect(overlaps(toastBox, topbar as Box)).toBe(false);
    // Whole on the screen.
    expect(toastBox.y).toBeGreaterThanOrEqual(0);
    expect(toastBox.y + toastBox.height).toBeLessThanOrEqual(844);
    // WCAG 2.5.8: a target of at least 24 x 24 CSS px (to a hundredth: the slide-in leaves a trace of a transform).
    const close = await toast.getByRole('button', { name: 'Close toast' }).boundingBox();
    expect(Math.round((close?.width ?? 0) * 100) / 100).toBeGreaterThanOrEqual(24);
    expect(Math.round((close?.height ?? 0) * 100) / 100).toBeGreaterThanOrEqual(24);

    // The menu button answers a tap while the toast shows.
    const menuButton = page.getByTestId('nav-menu-button');
    expect(await page.evaluate(() => document.querySelector('[data-sonner-toast]') !== null)).toBe(true);
    await menuButton.tap();
    const drawer = page.getByRole('navigation', { name: 'Main navigation (menu)' });
    await drawer.waitFor();
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });

    // Tapped (as when reading it), the toast still goes by itself, without a tap elsewhere.
    const tapped = await rename(`Phone clinic ${uniqueSuffix()}`);
    await settledBox(tapped);
    await tapped.locator('[data-title]').tap();
    await tapped.waitFor({ state: 'detached', timeout: 9_000 });
  });
});
