/**
 * Accessibility and small screens, on every page (test/browser/pages.ts): axe-core finds no serious
 * or critical violation, signed out and signed in, in light and dark colour schemes; at 390 × 844
 * no page scrolls sideways and every navigation item is reachable through the menu; dialogs trap
 * focus, close on Escape and give focus back to their opener; keyboard focus is visible.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';
import { PAGES, type PageEntry } from './pages.js';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };

describe('accessibility and small screens', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  const fixture: Record<string, string> = {};

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'enterprise' });
    // Data so that pages show their content, not only their empty states.
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const created = await page.evaluate(async () => {
      const response = await fetch('/api/v1/patients', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ givenName: 'Ada', familyName: 'Lovelace', dateOfBirth: '1990-12-10', mrn: 'A11Y-1' }),
      });
      return (await response.json()) as { id: string };
    });
    fixture.patientId = created.id;
    const colleague = await harness.addMember(workspace.id, {
      email: `colleague-${workspace.id}@example.test`,
      name: 'Grace Hopper',
      role: 'member',
      password: `pw-${workspace.id}-x`,
    });
    await page.evaluate(async (userId) => {
      await fetch('/api/v1/direct-messages', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ recipients: [userId], body: 'Morning huddle at 8:15' }),
      });
    }, colleague.userId);
    // A received message, so the Mail page shows its list and reading pane.
    await fetch(`${harness.baseUrl}/api/v1/mail/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${harness.operatorToken}` },
      body: `From: lab@example.test\r\nTo: ${workspace.id}@inbound.atrium.local\r\nSubject: Results\r\n\r\nAll in range.\r\n`,
    });
    // A connected channel with a patient's message, so the Inbox shows its list.
    await page.evaluate(async () => {
      const botToken = `${Date.now() % 1e9}:AAa11yInboxBotToken`;
      await fetch('/api/v1/channels', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({
          channel: 'telegram',
          name: 'Clinic bot',
          credentials: { botToken, secretToken: 'a11y-secret-token-123' },
        }),
      });
      await fetch('/_emulators/telegram/simulate', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ botToken, chatId: 5550001, firstName: 'Ada', text: 'Can I reschedule?' }),
      });
    });
    // A connected calendar with an event this week (the patient's appointment), so the calendar shows
    // its grid, legend and events, and the patient record its schedule.
    const { authorizeUrl } = await page.evaluate(async () => {
      const response = await fetch('/api/v1/calendar/connections', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ provider: 'google' }),
      });
      return (await response.json()) as { authorizeUrl: string };
    });
    await page.goto(authorizeUrl);
    await page.waitForURL(/\/calendar/);
    await page.evaluate(async (patientId) => {
      const calendars = await (await fetch('/api/v1/calendar/calendars')).json();
      const start = new Date();
      start.setUTCHours(15, 0, 0, 0);
      await fetch('/api/v1/calendar/events', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({
          calendar: calendars.items[0].id,
          draft: {
            title: 'Intake call',
            start: start.toISOString(),
            end: new Date(start.getTime() + 1800_000).toISOString(),
            conference: 'meet',
            patientId,
          },
        }),
      });
    }, fixture.patientId);
  });

  afterAll(async () => {
    await harness?.close();
  });

  function pathOf(entry: PageEntry): string {
    return entry.path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(fixture[name] ?? name));
  }

  async function waitReady(page: Page, entry: PageEntry): Promise<void> {
    const ready = entry.ready;
    if ('testId' in ready) await page.getByTestId(ready.testId).first().waitFor();
    else if ('text' in ready) await page.getByText(ready.text).first().waitFor();
    else await page.getByRole('heading', { name: ready.name, exact: true }).first().waitFor();
  }

  async function seriousViolations(page: Page): Promise<string[]> {
    const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    return results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }

  async function horizontalOverflow(page: Page): Promise<number> {
    return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  }

  it("loads the calendar's and the health pages' heavy code only when one is opened", async () => {
    const page = await harness.newPage();
    const scripts: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname);
    });
    // The page's own code writes no error to the console (zod's eval probe against the CSP did, on every load).
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
        consoleErrors.push(message.text());
      }
    });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients');
    await page.getByRole('heading', { name: 'Patients', exact: true }).waitFor();
    expect(scripts.some((s) => /calendar-page-/.test(s))).toBe(false);
    expect(scripts.some((s) => /health-page-/.test(s))).toBe(false);
    // Through the navigation, as a person goes there: the chunk comes, and the page shows whole.
    await page.getByRole('link', { name: 'Calendar', exact: true }).first().click();
    await page.getByTestId('calendar-legend').waitFor();
    expect(scripts.some((s) => /calendar-page-/.test(s))).toBe(true);
    expect(scripts.some((s) => /health-page-/.test(s))).toBe(false);
    expect(consoleErrors).toEqual([]);
    await page.close();
  });

  it('a chunk the server no longer has (a tab older than a deploy) reloads the page once, and the page opens', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients');
    await page.getByRole('heading', { name: 'Patients', exact: true }).waitFor();
    // The old build's chunk is gone for good; after a reload the page asks for the (here: same) new one.
    let refused = 0;
    let reloads = 0;
    page.on('load', () => {
      reloads += 1;
    });
    await page.route(/\/assets\/calendar-page-[^/]*\.js$/, (route) => {
      if (reloads > 0) return route.continue();
      refused += 1;
      return route.fulfill({ status: 404, contentType: 'text/plain', body: 'gone' });
    });
    await page.getByRole('link', { name: 'Calendar', exact: true }).first().click();
    await page.getByTestId('calendar-legend').waitFor({ timeout: 15_000 });
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(reloads).toBe(1);
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    await page.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`has no serious axe violations on any page (${scheme})`, async () => {
      const signedOut = await harness.newPage();
      await signedOut.emulateMedia({ colorScheme: scheme });
      const page = await harness.newPage();
      await page.emulateMedia({ colorScheme: scheme });
      await signIn(page, workspace.admin.email, workspace.admin.password);
      const failures: string[] = [];
      for (const entry of PAGES) {
        const target = entry.signedOut ? signedOut : page;
        await target.goto(pathOf(entry));
        await waitReady(target, entry);
        for (const violation of await seriousViolations(target)) failures.push(`${entry.name}: ${violation}`);
      }
      expect(failures).toEqual([]);
      // 23 pages with a full axe run each (~1.5–3.5 s apiece): about 45 s on a quiet machine, so a minute was
      // too tight for a busy one. Not a speed target, a safety net.
    }, 180_000);
  }

  it('fits 390 px wide without sideways scrolling, and the menu reaches every navigation item', async () => {
    const signedOut = await harness.newPage();
    await signedOut.setViewportSize(PHONE);
    const page = await harness.newPage();
    await page.setViewportSize(PHONE);
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const overflowing: string[] = [];
    for (const entry of PAGES) {
      const target = entry.signedOut ? signedOut : page;
      await target.goto(pathOf(entry));
      await waitReady(target, entry);
      const overflow = await horizontalOverflow(target);
      if (overflow > 0) overflowing.push(`${entry.name}: ${overflow}px too wide`);
    }
    expect(overflowing).toEqual([]);

    // The sidebar is hidden on a phone; the menu button opens every item of it.
    await page.goto('/patients');
    await page.getByTestId('patient-row').first().waitFor();
    expect(await page.locator('.sidebar').isVisible()).toBe(false);
    const opener = page.getByTestId('nav-menu-button');
    await opener.click();
    const menu = page.getByTestId('nav-menu');
    for (const label of [
      'Patients',
      'Calendar',
      'Inbox',
      'Messages',
      'Mail',
      'Marketplace',
      'Members',
      'API tokens',
      'Audit log',
      'Webhooks',
      'Health',
      'Settings',
    ]) {
      expect(await menu.getByRole('link', { name: label }).isVisible()).toBe(true);
    }
    await menu.getByRole('link', { name: 'Marketplace' }).click();
    await page.getByTestId('install-count').waitFor();
    expect(new URL(page.url()).pathname).toBe('/marketplace');
    await expect.poll(() => menu.isVisible()).toBe(false);
  });

  it('traps focus in dialogs, closes them on Escape and returns focus to the opener', async () => {
    const page = await harness.newPage();
    await page.setViewportSize(PHONE);
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients');
    await page.getByTestId('patient-row').first().waitFor();
    const opener = page.getByTestId('nav-menu-button');
    await opener.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByTestId('nav-menu');
    await dialog.waitFor();
    // Tab far past the number of focusable elements: focus never leaves the dialog.
    for (let i = 0; i < 25; i++) {
      await page.keyboard.press('Tab');
      expect(await dialog.evaluate((el) => el.contains(document.activeElement))).toBe(true);
    }
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await opener.evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it('shows a visible focus ring on keyboard focus and reaches the navigation by keyboard', async () => {
    const page = await harness.newPage();
    await page.setViewportSize(DESKTOP);
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients');
    await page.getByTestId('patient-row').first().waitFor();
    const reached = new Set<string>();
    for (let i = 0; i < 70 && reached.size < 12; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!el) return null;
        const style = getComputedStyle(el);
        const ring =
          (style.boxShadow && style.boxShadow !== 'none') ||
          (style.outlineStyle !== 'none' && style.outlineWidth !== '0px');
        return { testId: el.dataset.testid ?? '', ring };
      });
      if (focused?.testId.startsWith('nav-')) {
        expect(focused.ring, `${focused.testId} shows a focus ring`).toBe(true);
        reached.add(focused.testId);
      }
    }
    expect([...reached].sort()).toEqual(
      [
        'nav-admin-audit',
        'nav-admin-health',
        'nav-admin-members',
        'nav-admin-settings',
        'nav-admin-tokens',
        'nav-admin-webhooks',
        'nav-calendar',
        'nav-mail',
        'nav-inbox',
        'nav-marketplace',
        'nav-messages',
        'nav-patients',
      ].sort(),
    );
  });
});
