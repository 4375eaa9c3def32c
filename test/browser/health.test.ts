// Health as users meet it: while Google's token endpoint fails, a workspace using Google Calendar
// sees a banner on every page (dismissible for the session, gone on recovery), and its admin sees
// the failing component and the open incident on the Health page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

describe('Health banners and dashboard', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;

  const cron = async () =>
    (
      await fetch(`${harness.baseUrl}/api/v1/cron/services-health`, {
        headers: { authorization: `Bearer ${harness.operatorToken}` },
      })
    ).status;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'advanced' });
    page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/calendar');
    await page.getByTestId('connect-google').click();
    await page.waitForURL(/\/calendar/);
    await page.getByTestId('connection').first().waitFor();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('a Google outage shows a banner here, dismissible for the session; the Health page shows the incident', async () => {
    await fetch(`${harness.baseUrl}/_emulators/google/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'token', status: 503, times: 3 }),
    });
    for (let run = 0; run < 3; run++) expect(await cron()).toBe(503);
    await page.goto('/patients');
    const banner = page.locator('[data-testid="health-banner"][data-feature="calendar-google"]');
    await banner.getByText('Google Calendar is not answering').waitFor();
    await page.goto('/admin/health');
    const card = page.locator('[data-testid="health-card"][data-component="oauth-google:token-refresh"]');
    await card.getByText('Failing').waitFor();
    // Titled in words, with the check's id beside it for operators.
    expect(await card.getByRole('heading').textContent()).toBe('Google Calendar: sign-in renewal');
    expect(await card.locator('.health-id').textContent()).toBe('oauth-google:token-refresh');
    await page.getByTestId('incident-log').getByRole('cell', { name: 'Google Calendar oauth-google' }).waitFor();
    // On a phone the incident log stacks its rows instead of scrolling the page sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await page.setViewportSize({ width: 1280, height: 800 });
    await banner.getByTestId('dismiss-banner').click();
    await expect.poll(() => banner.count()).toBe(0);
    await page.reload();
    await page.getByTestId('health-components').waitFor();
    expect(await banner.count()).toBe(0);
  });

  it('the banner is gone after recovery (2 passing runs)', async () => {
    await page.evaluate(() => sessionStorage.clear());
    expect(await cron()).toBe(200);
    expect(await cron()).toBe(200);
    // The banner query answers with nothing once the incident is closed.
    const answered = page.waitForResponse((r) => r.url().includes('/api/v1/health/banners') && r.ok());
    await page.goto('/patients');
    expect((await (await answered).json()).items).toEqual([]);
    expect(await page.getByTestId('health-banner').count()).toBe(0);
    await page.goto('/admin/health');
    await page.getByTestId('incident-log').getByText('Resolved').waitFor();
  });

  it('the public status page says over how many days its uptime was measured', async () => {
    await page.goto('/status');
    const summary = page.getByTestId('uptime-summary').first();
    await summary.waitFor();
    // A fresh install has measured one day, not ninety.
    expect(await summary.textContent()).toMatch(/uptime over the (one day|\d+ days) measured/);
  });
});
