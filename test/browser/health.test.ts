// Health as users meet it: while Google's token endpoint fails, a workspace using Google Calendar
// sees a banner on every page (dismissible for the session, gone on recovery), and its admin sees
// the failing component and the open incident on the Health page, whose sparklines draw a flat series whole.
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
    // What needs a look leads the page: named at the top, its card first among the cards, one click away.
    const summary = page.getByTestId('health-summary');
    expect(await summary.textContent()).toContain('Google Calendar: sign-in renewal — failing');
    expect(await page.getByTestId('health-card').first().getAttribute('data-component')).toBe(
      'oauth-google:token-refresh',
    );
    await summary.getByRole('link', { name: 'Google Calendar: sign-in renewal' }).click();
    await expect
      .poll(() => card.evaluate((el) => el === document.activeElement || location.hash.length > 1))
      .toBe(true);
    // On a phone the incident log stacks its rows instead of scrolling the page sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    // The incidents come after every check's card, far down on a phone: the top of the page says how many are open
    // and goes straight there.
    await page.evaluate(() => window.scrollTo(0, 0));
    const jump = page.getByTestId('jump-incidents');
    expect(await jump.textContent()).toBe('Incidents: 1 open');
    await jump.click();
    await expect
      .poll(() =>
        page.getByTestId('incident-log').evaluate((el) => el.getBoundingClientRect().top < window.innerHeight),
      )
      .toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
    await banner.getByTestId('dismiss-banner').click();
    await expect.poll(() => banner.count()).toBe(0);
    await page.reload();
    await page.getByTestId('health-components').waitFor();
    expect(await banner.count()).toBe(0);

    // The public status page names what is down, shows it first, and says when it was read.
    await page.goto('/status');
    await expect.poll(() => page.getByTestId('status-overall').textContent()).toContain('Google Calendar');
    expect(await page.getByTestId('status-overall').textContent()).toMatch(/^Not working normally: /);
    expect(await page.getByTestId('status-feature').first().getByRole('heading').textContent()).toBe('Google Calendar');
    expect(await page.getByTestId('status-updated').textContent()).toMatch(/Last read at \d/);
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

  it('a flat sparkline (replica delay, always 0 here) is drawn inside its chart, not on the bottom edge', async () => {
    await page.goto('/admin/health');
    const canvas = page.locator(
      '[data-testid="health-card"][data-component="database:replication-lag"] .sparkline canvas',
    );
    await canvas.waitFor();
    // The rows of the canvas that uPlot painted (line and dots): none at the top or bottom edge.
    const painted = () =>
      canvas.evaluate((el: HTMLCanvasElement) => {
        const { width, height } = el;
        const data = el.getContext('2d')?.getImageData(0, 0, width, height).data ?? new Uint8ClampedArray();
        const rows: number[] = [];
        for (let y = 0; y < height; y++) {
          for (let x = 0; x < width; x++) {
            if (data[(y * width + x) * 4 + 3] > 0) {
              rows.push(y);
              break;
            }
          }
        }
        return { height, top: rows[0] ?? -1, bottom: rows[rows.length - 1] ?? -1 };
      });
    await expect.poll(async () => (await painted()).top).toBeGreaterThanOrEqual(0);
    const { height, top, bottom } = await painted();
    expect(top).toBeGreaterThan(height / 4);
    expect(bottom).toBeLessThan((height * 3) / 4);
  });

  it('the public status page says over how many days its uptime was measured', async () => {
    await page.goto('/status');
    const summary = page.getByTestId('uptime-summary').first();
    await summary.waitFor();
    // A fresh install has measured one day, not ninety.
    expect(await summary.textContent()).toMatch(/uptime over the (one day|\d+ days) measured/);
    // The day Google failed (the outage above) is said in words, not only in a bar's hover title.
    const google = page.getByTestId('status-feature').filter({ hasText: 'Google Calendar' });
    const today = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(
      new Date(),
    );
    expect(await google.getByTestId('uptime-low-days').textContent()).toMatch(
      new RegExp(`^Below 99 %: ${today} \\(\\d+(\\.\\d+)? %\\)\\.$`),
    );
  });
});
