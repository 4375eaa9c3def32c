/**
 * Admin → Webhooks as an administrator uses it (UX review of 2026-11-27): where the keyboard focus goes after an
 * action, buttons a screen reader tells apart, confirmations and announcements, plain words before codes, a phone.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';
import { axeProblems, type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

/** The focused element: its test id, its text, the tag and whether it is the page itself. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const a = document.activeElement as HTMLElement | null;
    return {
      body: !a || a === document.body,
      testId: a?.getAttribute('data-testid') ?? null,
      tag: a?.tagName ?? '',
      text: a?.textContent?.trim() ?? '',
      label: a?.getAttribute('aria-label') ?? '',
      inInbox: !!a?.closest('[data-testid="inbox"]'),
    };
  });

describe('Admin → Webhooks, as an administrator uses it', () => {
  let t: TestApp;
  let harness: BrowserHarness;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    if (!process.env.NODE_EXTRA_CA_CERTS) throw new Error('Run with NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem');
    t = await createTestApp({ webhooks: { retryDelaysMs: [200], timeoutMs: 2000, allowCidrs: ['127.0.0.0/8'] } });
    await t.startBackground();
    process.env.ATRIUM_BROWSER_BASE_URL = t.baseUrl;
    process.env.ATRIUM_BROWSER_OPERATOR_TOKEN = t.config.operatorToken;
    harness = await startHarness();
    receiver = await startHttpsReceiver({ response: { status: 500, body: 'receiver is down' } });
  });

  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
    await t?.close();
  });

  /** A call with the page's own session. */
  const call = (page: Page, method: string, path: string, body?: unknown) =>
    page.evaluate(
      async ([method, path, body]) => {
        const res = await fetch(`/api/v1${path}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await res.json().catch(() => null) };
      },
      [method, path, body] as const,
    );

  /**
   * A workspace with an endpoint that is down and `events` new patients, each dead-lettered: `events` open items.
   * Signed in on a page at /admin/webhooks.
   */
  async function downEndpoint(events: number, options: { phone?: boolean; url?: string } = {}) {
    const workspace: TestWorkspace = await harness.createWorkspace({ tier: 'advanced' });
    const page = await harness.newPage({ phone: options.phone });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const created = await call(page, 'POST', '/admin/webhooks', {
      url: options.url ?? `${receiver.url}/down-${workspace.id}`,
      events: ['patient.created'],
      description: 'Billing system (old server)',
    });
    expect(created.status).toBe(201);
    const endpointId = created.body.id as string;
    for (let i = 0; i < events; i++) {
      expect((await call(page, 'POST', '/patients', { givenName: `Ada${i}`, familyName: 'Hook' })).status).toBe(201);
    }
    await expect
      .poll(async () => (await call(page, 'GET', '/inbox?state=open')).body.items.length, { timeout: 20_000 })
      .toBe(events);
    await page.goto('/admin/webhooks');
    await page.getByTestId('inbox-row').first().waitFor();
    return { workspace, page, endpointId };
  }

  it('finding 2: after Resolve, Replay, Reopen and Delete from the keyboard, the focus stays in the list', async () => {
    receiver.respondWith({ status: 500, body: 'receiver is down' });
    const { page } = await downEndpoint(3);
    const rows = page.getByTestId('inbox-row');
    await expect.poll(() => rows.count()).toBe(3);

    // Resolve the first: the focus goes to the Resolve of the item now in its place.
    await rows.first().getByTestId('inbox-resolve').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(2);
    await expect.poll(async () => (await focused(page)).testId).toBe('inbox-resolve');
    expect((await focused(page)).inInbox).toBe(true);

    // Replay the next: the same.
    receiver.respondWith({ status: 204 });
    await rows.first().getByTestId('inbox-replay').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(1);
    await expect.poll(async () => (await focused(page)).testId).toBe('inbox-replay');

    // The last one: the focus goes to the section's heading, not the page.
    await rows.first().getByTestId('inbox-resolve').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(0);
    await expect.poll(async () => (await focused(page)).tag).toBe('H2');
    expect((await focused(page)).inInbox).toBe(true);

    // Reopen among the handled items.
    await page.getByTestId('inbox-filter').selectOption('handled');
    const reopen = page.getByTestId('inbox-reopen').first();
    await reopen.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('inbox-reopen').count()).toBe(1);
    await expect.poll(async () => (await focused(page)).testId).toBe('inbox-reopen');

    // Delete an endpoint: after the confirmation the focus is not lost to the page.
    await page
      .getByTestId('endpoint-row')
      .first()
      .getByRole('button', { name: /^Delete/ })
      .focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('confirm-delete').focus();
    await page.keyboard.press('Enter');
    await page.getByText('No endpoints yet').waitFor();
    await expect.poll(async () => (await focused(page)).text).toBe('Endpoints');
    await page.close();
  });

  it('finding 8: every Replay, Resolve and Details button has a name of its own', async () => {
    receiver.respondWith({ status: 500, body: 'receiver is down' });
    const { page } = await downEndpoint(2);
    const names = async (selector: string) =>
      page
        .locator(selector)
        .evaluateAll((els) =>
          els.map((e) => (e.getAttribute('aria-label') ?? e.textContent ?? '').replace(/\s+/g, ' ').trim()),
        );
    const inboxReplays = await names('[data-testid="inbox"] [data-testid="inbox-replay"]');
    expect(inboxReplays.length).toBe(2);
    expect(new Set(inboxReplays).size).toBe(2);
    for (const name of inboxReplays) expect(name).toMatch(/^Replay .+/);
    const resolves = await names('[data-testid="inbox-resolve"]');
    expect(new Set(resolves).size).toBe(2);

    await page.getByTestId('endpoint-link').first().click();
    const log = page.getByTestId('delivery-log');
    await log.waitFor();
    await expect
      .poll(
        async () => {
          await log.getByRole('button', { name: 'Refresh' }).click();
          return log.getByTestId('delivery-row').count();
        },
        { timeout: 10_000 },
      )
      .toBe(4);
    const logReplays = await names('[data-testid="delivery-log"] [data-testid="replay"]');
    // One name per event (the two events' buttons differ).
    expect(new Set(logReplays).size).toBe(2);
    for (const name of logReplays) expect(name).toMatch(/^Replay .+/);
    const details = await names('[data-testid="delivery-details"]');
    expect(new Set(details).size).toBe(details.length);
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.close();
  });

  /** A workspace with one endpoint that answers 204, signed in on a page at /admin/webhooks. */
  async function oneEndpoint() {
    const workspace = await harness.createWorkspace({ tier: 'advanced' });
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const url = `${receiver.url}/up-${workspace.id}`;
    const created = await call(page, 'POST', '/admin/webhooks', { url, events: ['*'], description: 'Billing' });
    expect(created.status).toBe(201);
    await page.goto('/admin/webhooks');
    const row = page.getByTestId('endpoint-row').filter({ hasText: url });
    await row.waitFor();
    return { page, row, url, id: created.body.id as string };
  }

  it('finding 9: Rotate secret asks first; Disable and Enable are announced', async () => {
    receiver.respondWith({ status: 204 });
    const { page, row, url } = await oneEndpoint();
    const shown = page.getByTestId('endpoint-secret');
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Replace the signing secret?' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('24 hours');
    // Escape (or Cancel) keeps the secret as it was.
    await page.keyboard.press('Escape');
    await expect.poll(() => confirm.isVisible()).toBe(false);
    expect(await shown.count()).toBe(0);
    expect(await row.getByText('Old secret also signs until').count()).toBe(0);
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await confirm.getByTestId('confirm-rotate').click();
    await shown.waitFor();
    expect((await shown.textContent())?.trim()).toMatch(/^whsec_/);
    await page.getByTestId('secret-stored').click();

    // Disable and Enable say what happened, in a toast (a live region).
    await row.getByRole('button', { name: 'Disable' }).click();
    const disabled = page.locator('[data-sonner-toast]').filter({ hasText: 'receives no events' });
    await disabled.waitFor();
    expect(await disabled.textContent()).toContain(url);
    await row.getByRole('button', { name: 'Enable' }).click();
    await page.locator('[data-sonner-toast]').filter({ hasText: 'Events are sent to it again' }).waitFor();
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.close();
  });

  it('finding 19: Edit opens on the Endpoint URL field', async () => {
    const { page, row } = await oneEndpoint();
    await row.getByTestId('edit-endpoint').focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByTestId('edit-endpoint-dialog');
    await dialog.waitFor();
    const url = dialog.getByLabel('Endpoint URL');
    await expect.poll(() => url.evaluate((el) => el === document.activeElement)).toBe(true);
    // Typing goes into it at once.
    await page.keyboard.press('End');
    await page.keyboard.type('-x');
    expect(await url.inputValue()).toMatch(/-x$/);
    await page.keyboard.press('Escape');
    await page.close();
  });

  it('finding 12: the failed-and-undelivered section is not called Inbox (the patient-messages Inbox is)', async () => {
    const { page } = await oneEndpoint();
    const section = page.getByTestId('inbox');
    await section.getByRole('heading', { name: 'Needs attention', level: 2 }).waitFor();
    expect(await page.locator('main').getByRole('heading', { name: /inbox/i }).count()).toBe(0);
    expect(await section.textContent()).not.toMatch(/\binbox\b/i);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.close();
  });

  it('finding 4: the failed events and the delivery log lead with plain words; codes come second', async () => {
    // Nothing listens on port 9: every attempt ends without an answer (connection refused).
    const { page } = await downEndpoint(1, { url: 'https://127.0.0.1:9/refused' });
    const row = page.getByTestId('inbox-row').first();
    expect(await row.getByTestId('inbox-what').textContent()).toBe('New patient');
    // The code is still there for developers, after the words.
    expect(await row.locator('code').first().textContent()).toBe('patient.created');
    const status = (await row.getByTestId('inbox-last-status').textContent()) ?? '';
    expect(status).toMatch(/^No answer/);
    expect(status).toContain('refused the connection');
    expect(status).not.toMatch(/^—/);

    await row.getByTestId('inbox-replay').click();
    const notice = page.getByText('is being sent again');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('New patient');
    expect(await notice.textContent()).not.toContain('evt_');

    await page.getByTestId('endpoint-link').first().click();
    const log = page.getByTestId('delivery-log');
    await log.getByTestId('delivery-row').first().waitFor({ timeout: 10_000 });
    const logText = (await log.textContent()) ?? '';
    expect(logText).not.toContain('HTTP —');
    expect(logText).toContain('New patient');
    expect(await log.getByTestId('delivery-status').first().textContent()).toBe('No answer');
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await page.close();
  });

  it('findings 6 and 21: on a phone, tapping an endpoint brings its deliveries into view; the link is big enough to tap', async () => {
    receiver.respondWith({ status: 500, body: 'receiver is down' });
    // A URL short enough for one line: the link is one line of text high.
    const { page } = await downEndpoint(1, { phone: true, url: `${receiver.url}/b` });
    const link = page.getByTestId('endpoint-link').first();
    const box = await link.boundingBox();
    expect(box && box.height >= 24 && box.width >= 24).toBe(true);
    await link.tap();
    await page.waitForURL(/\/admin\/webhooks\/whk_/);
    const heading = page.getByTestId('delivery-log').getByRole('heading', { level: 2 });
    await heading.waitFor();
    // Its heading is on screen (not below the Add an endpoint form) and has the focus (a screen reader is there too).
    await expect
      .poll(() =>
        // On screen and not under the sticky top bar: the heading is what shows at its own middle.
        heading.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const top = document.elementFromPoint(r.left + 10, r.top + r.height / 2);
          return r.bottom <= innerHeight && !!top && el.contains(top);
        }),
      )
      .toBe(true);
    await expect.poll(() => heading.evaluate((el) => el === document.activeElement)).toBe(true);
    // The endpoint's link in the failed-events list does the same.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.getByTestId('inbox').getByRole('link').first().tap();
    await expect
      .poll(() =>
        // On screen and not under the sticky top bar: the heading is what shows at its own middle.
        heading.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const top = document.elementFromPoint(r.left + 10, r.top + r.height / 2);
          return r.bottom <= innerHeight && !!top && el.contains(top);
        }),
      )
      .toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.close();
  });

  it('finding 11: the delivery log is grouped by event, with one Replay per event; the failed list names the endpoint', async () => {
    receiver.respondWith({ status: 500, body: 'receiver is down' });
    const { page } = await downEndpoint(2);
    // The failed-events list says which system the endpoint is, not only its URL.
    const first = page.getByTestId('inbox-row').first();
    expect(await first.textContent()).toContain('Billing system (old server)');

    await page.getByTestId('endpoint-link').first().click();
    const log = page.getByTestId('delivery-log');
    await expect
      .poll(
        async () => {
          await log.getByRole('button', { name: 'Refresh' }).click();
          return log.getByTestId('delivery-row').count();
        },
        { timeout: 10_000 },
      )
      .toBe(4);
    const groups = log.getByTestId('delivery-event');
    expect(await groups.count()).toBe(2);
    expect(await log.getByTestId('replay').count()).toBe(2);
    for (const group of await groups.all()) {
      expect(await group.getByTestId('replay').count()).toBe(1);
      const ids = await group.getByTestId('delivery-row').evaluateAll((rows) => rows.map((r) => r.dataset.eventId));
      expect(ids.length).toBe(2);
      expect(new Set(ids).size).toBe(1);
      expect(await group.textContent()).toContain('2 attempts');
    }
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.close();
  });

  it('finding 22: the event filter is in plain words, without the test event; the list of endpoints too', async () => {
    const workspace = await harness.createWorkspace({ tier: 'advanced' });
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/webhooks');
    const form = page.getByTestId('endpoint-form');
    await form.getByTestId('all-events').click();
    // Each choice leads with words (its code after them, for developers).
    const note = form.getByRole('checkbox', { name: /^Visit note signed/ });
    await note.waitFor();
    expect(await form.getByText('soap_note.signed').count()).toBe(1);
    await form.getByRole('checkbox', { name: /^New patient/ }).waitFor();
    await form.getByRole('checkbox', { name: /^Someone signed in/ }).waitFor();
    // The test event is sent by Send test event, not subscribed to.
    expect(await form.getByRole('checkbox', { name: /test/i }).count()).toBe(0);
    const hint = (await form.locator('.event-filter').textContent()) ?? '';
    expect(hint).not.toContain('break_glass.invoked is always');
    expect(hint).toMatch(/Emergency access to a record.*always sent/);

    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/filtered`);
    await form.getByText('Visit note signed').click();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByTestId('secret-stored').click();
    const row = page.getByTestId('endpoint-row').filter({ hasText: '/filtered' });
    const events = row.locator('td[data-label="Events"]');
    expect(await events.textContent()).toContain('Visit note signed');
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await form.getByTestId('all-events').click();
    await note.waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.close();
  });

  it('finding 3: failed events are resolved or replayed in bulk (the endpoint that was down for an afternoon)', async () => {
    receiver.respondWith({ status: 500, body: 'receiver is down' });
    const { page, endpointId } = await downEndpoint(4);
    const rows = page.getByTestId('inbox-row');
    await expect.poll(() => rows.count()).toBe(4);

    // Two chosen by hand, resolved at once.
    await rows.nth(0).getByRole('checkbox').check();
    await rows.nth(1).getByRole('checkbox').check();
    const resolveSelected = page.getByTestId('inbox-resolve-selected');
    expect(await resolveSelected.textContent()).toBe('Resolve 2 selected');
    await resolveSelected.click();
    await page.getByText('2 items resolved').waitFor();
    await expect.poll(() => rows.count()).toBe(2);
    await expect.poll(async () => (await focused(page)).body).toBe(false);

    // The receiver is back: all the rest replayed with one press.
    receiver.respondWith({ status: 204 });
    receiver.requests.length = 0;
    await page.getByTestId('inbox-select-all').check();
    const replaySelected = page.getByTestId('inbox-replay-selected');
    expect(await replaySelected.textContent()).toBe('Replay 2 selected');
    await replaySelected.click();
    await page.getByText('2 events are being sent again').waitFor();
    await expect.poll(() => rows.count()).toBe(0);
    await receiver.waitFor(2, 10_000);
    await expect.poll(async () => (await focused(page)).body).toBe(false);

    // Each one handled as if done alone: by this admin, in Handled, audited one by one.
    await page.getByTestId('inbox-filter').selectOption('handled');
    await expect.poll(() => page.locator('[data-testid="inbox-row"][data-state="replayed"]').count()).toBe(2);
    await expect.poll(() => page.locator('[data-testid="inbox-row"][data-state="resolved"]').count()).toBe(2);
    const audit = await call(page, 'GET', '/audit?limit=50');
    const actions = JSON.stringify(audit.body);
    expect(actions.split('webhooks.inbox_resolve').length - 1).toBe(2);
    expect(actions.split('webhooks.replay').length - 1).toBe(2);
    expect(actions).toContain(endpointId);
    expect(await axeProblems(page, 'main')).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await page.close();
  });
});
