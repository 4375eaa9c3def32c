import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

// The harness's default server has no outbound allow-list; this file runs its own app (loopback
// allowed, compressed retries) and points the harness at it.
describe('Admin → Webhooks page', () => {
  let t: TestApp;
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    if (!process.env.NODE_EXTRA_CA_CERTS) throw new Error('Run with NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem');
    t = await createTestApp({ webhooks: { retryDelaysMs: [300], timeoutMs: 2000, allowCidrs: ['127.0.0.0/8'] } });
    await t.startBackground();
    process.env.ATRIUM_BROWSER_BASE_URL = t.baseUrl;
    process.env.ATRIUM_BROWSER_OPERATOR_TOKEN = t.config.operatorToken;
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'advanced' });
    receiver = await startHttpsReceiver({ response: { status: 500, body: 'receiver is down' } });
  });

  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
    await t?.close();
  });

  /** Creates a patient with the page's own session (emits patient.created). */
  const createPatient = (page: Page) =>
    page.evaluate(async () => {
      const res = await fetch('/api/v1/patients', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ givenName: 'Ada', familyName: 'Hook' }),
      });
      return res.status;
    });

  it('creates an endpoint, shows failed attempts and the inbox, replays, rotates, disables and deletes', async () => {
    const page = await harness.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.getByTestId('nav-admin-webhooks').click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByText('No endpoints yet').waitFor();

    // An unsafe URL is refused at once, with the reason in words.
    await page.getByLabel('Endpoint URL').fill('http://example.com/hook');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await page.getByTestId('url-error').textContent()).toContain('https://');

    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/atrium`);
    await page.getByLabel('Description').fill('Billing system');
    // From the keyboard: the secret, once shown, has the focus (on Copy); dismissed, the focus goes back.
    await page.getByRole('button', { name: 'Add endpoint' }).focus();
    await page.keyboard.press('Enter');
    const secret = (await page.getByTestId('endpoint-secret').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^whsec_/);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('copy-secret');
    await page.getByTestId('copy-secret').click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

    const row = page.getByTestId('endpoint-row').filter({ hasText: receiver.url });
    await row.waitFor();
    expect(await row.getByTestId('endpoint-state').textContent()).toBe('Enabled');
    // A button of the kit like every other action on the page, not an icon-button style.
    const stored = page.getByRole('button', { name: 'I have stored it' });
    expect((await stored.getAttribute('class'))?.split(' ')).toEqual(
      expect.arrayContaining(['button', 'button-secondary']),
    );
    await stored.focus();
    await page.keyboard.press('Enter');
    expect(await page.getByTestId('endpoint-secret').count()).toBe(0);
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Add endpoint');

    // An event; the receiver answers 500, so both attempts fail and the event is dead-lettered.
    expect(await createPatient(page)).toBe(201);
    await receiver.waitFor(2, 10_000);
    const [first] = receiver.requests;
    expect(new Webhook(secret).verify(first.body, first.headers)).toMatchObject({ type: 'patient.created' });

    await row.getByTestId('endpoint-link').click();
    const log = page.getByTestId('delivery-log');
    await log.waitFor();
    const failedRows = log.locator('[data-testid="delivery-row"][data-outcome="fail"]');
    await expect
      .poll(
        async () => {
          await log.getByRole('button', { name: 'Refresh' }).click();
          return failedRows.count();
        },
        { timeout: 10_000 },
      )
      .toBe(2);
    expect(await failedRows.first().getByTestId('delivery-status').textContent()).toBe('HTTP 500');
    expect(await failedRows.first().getByTestId('delivery-error').textContent()).toContain('receiver is down');
    const eventId = (await failedRows.first().getAttribute('data-event-id')) ?? '';

    await page.reload();
    const inboxRow = page.getByTestId('inbox-row').filter({ hasText: eventId });
    await inboxRow.waitFor({ timeout: 15_000 });
    expect(await inboxRow.textContent()).toContain('patient.created');

    // Replay after the receiver recovers: a fresh attempt that succeeds.
    receiver.respondWith({ status: 204 });
    await page.getByTestId('delivery-event').first().getByTestId('replay').click();
    await page.getByText('is being sent again, with a fresh set of retries').waitFor();
    const delivered = page.locator('[data-testid="delivery-row"][data-outcome="success"]');
    await expect
      .poll(
        async () => {
          await page.getByTestId('delivery-log').getByRole('button', { name: 'Refresh' }).click();
          return delivered.count();
        },
        { timeout: 10_000 },
      )
      .toBe(1);
    expect(await delivered.getAttribute('data-event-id')).toBe(eventId);

    // The replay handled the event's inbox item: it leaves the open list for Handled, replayed by this admin.
    await expect.poll(() => inboxRow.count(), { timeout: 15_000 }).toBe(0);
    const inboxFilter = page.getByTestId('inbox-filter');
    await inboxFilter.selectOption('handled');
    const handledRow = page.locator('[data-testid="inbox-row"][data-state="replayed"]').filter({ hasText: eventId });
    await handledRow.waitFor();
    expect(await handledRow.getByTestId('inbox-state').textContent()).toBe('Replayed');
    expect(await handledRow.getByTestId('inbox-handled-by').textContent()).toContain(`by ${workspace.admin.name}`);
    expect(await handledRow.getByTestId('inbox-replay').count()).toBe(0);
    await inboxFilter.selectOption('open');
    await page.getByText('Nothing needs attention').waitFor();

    // Disable and enable again.
    const endpointRow = page.getByTestId('endpoint-row').filter({ hasText: receiver.url });
    await endpointRow.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => endpointRow.getByTestId('endpoint-state').textContent()).toBe('Disabled');
    await endpointRow.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => endpointRow.getByTestId('endpoint-state').textContent()).toBe('Enabled');

    // Rotation shows the new secret once; both secrets sign the next delivery.
    await endpointRow.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('confirm-rotate').click();
    const rotated = (await page.getByTestId('endpoint-secret').textContent())?.trim() ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await endpointRow.getByText('Old secret also signs until').waitFor();
    receiver.requests.length = 0;
    expect(await createPatient(page)).toBe(201);
    const [next] = await receiver.waitFor(1, 10_000);
    expect(new Webhook(rotated).verify(next.body, next.headers)).toBeTruthy();
    expect(new Webhook(secret).verify(next.body, next.headers)).toBeTruthy();

    // Send test event: it arrives signed, and the attempt's detail shows the exact request and response.
    receiver.requests.length = 0;
    await endpointRow.getByTestId('send-test').click();
    await page.getByText('Test event sent').first().waitFor();
    const [test] = await receiver.waitFor(1, 10_000);
    expect(JSON.parse(test.body).type).toBe('webhook.test');
    const testRow = page.locator('[data-testid="delivery-event"]').filter({ hasText: 'webhook.test' });
    await expect
      .poll(
        async () => {
          await page.getByTestId('delivery-log').getByRole('button', { name: 'Refresh' }).click();
          return testRow.count();
        },
        { timeout: 10_000 },
      )
      .toBe(1);
    await testRow.getByTestId('delivery-details').click();
    const detail = page.getByTestId('delivery-detail');
    await detail.getByTestId('detail-status').waitFor();
    expect(await detail.getByTestId('detail-status').textContent()).toBe('204');
    const requestText = (await detail.getByTestId('detail-request').textContent()) ?? '';
    expect(requestText).toContain('webhook-signature');
    expect(requestText).toContain(test.headers['webhook-signature'].split(' ')[0]);
    expect(requestText).not.toContain(rotated);
    expect(await detail.getByTestId('detail-response').textContent()).toContain('HTTP');
    // The open detail passes axe (serious/critical), in dark mode too.
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const results = await new AxeBuilder({ page })
        .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
        .include('[data-testid="delivery-detail"]')
        .analyze();
      expect(
        results.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map(
            (v) =>
              `${scheme} ${v.id}: ${v.nodes.map((n) => `${n.target.join(' ')} ${n.failureSummary ?? ''}`).join('; ')}`,
          ),
      ).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.keyboard.press('Escape');
    await expect.poll(() => detail.isVisible()).toBe(false);

    // On a phone the endpoint's state and its buttons stay on screen (rows stack; nothing scrolls sideways).
    await page.setViewportSize({ width: 390, height: 844 });
    const badge = endpointRow.getByTestId('endpoint-state');
    const box = await badge.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    const testBox = await endpointRow.getByTestId('send-test').boundingBox();
    expect(testBox && testBox.x + testBox.width <= 390).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await page.setViewportSize({ width: 1280, height: 900 });

    // Delete needs a confirmation, then the endpoint is gone.
    await endpointRow.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete this endpoint?' });
    await confirm.waitFor();
    // Escape keeps the endpoint; the second time it is deleted.
    await page.keyboard.press('Escape');
    await expect.poll(() => confirm.isVisible()).toBe(false);
    expect(await endpointRow.count()).toBe(1);
    await endpointRow.getByRole('button', { name: 'Delete' }).click();
    await confirm.getByTestId('confirm-delete').click();
    await page.getByText('its pending deliveries were cancelled').waitFor();
    await page.getByText('No endpoints yet').waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/webhooks');
  });

  it('keeps a secret on screen until it is stored, whatever the admin opens on the page, in memory only', async () => {
    const own = await harness.createWorkspace({ tier: 'advanced' });
    const other = await harness.createWorkspace({ tier: 'advanced' });
    await harness.addMember(other.id, { email: own.admin.email, name: own.admin.name, role: 'admin' });
    receiver.respondWith({ status: 204 });
    const page = await harness.newPage();
    await signIn(page, own.admin.email, own.admin.password);
    const header = page.getByTestId('workspace-name');
    await page.getByLabel('Switch workspace').selectOption(own.id);
    await expect.poll(() => header.textContent()).toBe(own.name);
    await page.getByTestId('nav-admin-webhooks').click();
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/kept`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByTestId('endpoint-secret');
    await shown.waitFor();
    const secret = (await shown.textContent())?.trim() ?? '';
    expect(secret).toMatch(/^whsec_/);
    const shownSecret = async () => ((await shown.count()) === 0 ? null : (await shown.textContent())?.trim());
    const row = page.getByTestId('endpoint-row').filter({ hasText: `${receiver.url}/kept` });

    // Send test event opens the endpoint's log: the secret stays.
    await row.getByTestId('send-test').click();
    await page.waitForURL(/\/admin\/webhooks\/whk_/);
    await page.getByTestId('delivery-log').waitFor();
    expect(await shownSecret()).toBe(secret);
    // Back to the list by the navigation, and into the log again by the endpoint's link.
    await page.getByTestId('nav-admin-webhooks').click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/admin/webhooks');
    expect(await shownSecret()).toBe(secret);
    await row.getByTestId('endpoint-link').click();
    await page.getByTestId('delivery-log').waitFor();
    expect(await shownSecret()).toBe(secret);
    await page.goBack();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/admin/webhooks');
    expect(await shownSecret()).toBe(secret);

    // A rotation's new secret takes its place, and stays as well.
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('confirm-rotate').click();
    await expect.poll(shownSecret).not.toBe(secret);
    const rotated = (await shownSecret()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    await row.getByTestId('send-test').click();
    await page.waitForURL(/\/admin\/webhooks\/whk_/);
    await page.getByTestId('delivery-log').waitFor();
    expect(await shownSecret()).toBe(rotated);

    // Never in storage, the history or the URL.
    const kept = await page.evaluate(() =>
      JSON.stringify([{ ...localStorage }, { ...sessionStorage }, history.state, location.href, document.cookie]),
    );
    expect(kept).not.toContain(secret.slice(6));
    expect(kept).not.toContain(rotated.slice(6));

    // Another workspace never shows it, and coming back does not bring it back.
    await page.getByLabel('Switch workspace').selectOption(other.id);
    await expect.poll(() => header.textContent()).toBe(other.name);
    await page.getByText('No endpoints yet').waitFor();
    expect(await shown.count()).toBe(0);
    await page.getByLabel('Switch workspace').selectOption(own.id);
    await expect.poll(() => header.textContent()).toBe(own.name);
    await row.waitFor();
    expect(await shown.count()).toBe(0);

    // "I have stored it" is the one way to close it.
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('confirm-rotate').click();
    await shown.waitFor();
    await row.getByTestId('endpoint-link').click();
    await page.getByTestId('delivery-log').waitFor();
    await page.getByTestId('secret-stored').click();
    expect(await shown.count()).toBe(0);
    await page.getByTestId('nav-admin-webhooks').click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/admin/webhooks');
    expect(await shown.count()).toBe(0);
    await page.close();
  });

  it("edits an endpoint's URL and description; an unsafe URL is refused there; deliveries go to the new URL", async () => {
    const own = await harness.createWorkspace({ tier: 'advanced' });
    receiver.respondWith({ status: 204 });
    const page = await harness.newPage();
    await signIn(page, own.admin.email, own.admin.password);
    await page.goto('/admin/webhooks');
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/old-path`);
    await page.getByLabel('Description').fill('Old billing');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByTestId('secret-stored').click();
    const row = page.getByTestId('endpoint-row').filter({ hasText: '/old-path' });
    const id = await row.getAttribute('data-endpoint-id');

    await row.getByTestId('edit-endpoint').click();
    const dialog = page.getByTestId('edit-endpoint-dialog');
    await dialog.waitFor();
    expect(await dialog.getByLabel('Endpoint URL').inputValue()).toBe(`${receiver.url}/old-path`);
    expect(await dialog.getByLabel('Description').inputValue()).toBe('Old billing');
    await dialog.getByLabel('Endpoint URL').fill('http://example.com/new');
    await dialog.getByTestId('save-endpoint').click();
    expect(await dialog.getByTestId('url-error').textContent()).toContain('https://');
    await dialog.getByLabel('Endpoint URL').fill(`${receiver.url}/new-path`);
    await dialog.getByLabel('Description').fill('New billing');
    await dialog.getByTestId('save-endpoint').click();
    await expect.poll(() => dialog.isVisible()).toBe(false);

    // The same endpoint (id, secret, log), at its new URL.
    const moved = page.getByTestId('endpoint-row').filter({ hasText: '/new-path' });
    await moved.waitFor();
    expect(await moved.getAttribute('data-endpoint-id')).toBe(id);
    expect(await moved.textContent()).toContain('New billing');
    expect(await page.getByTestId('endpoint-row').count()).toBe(1);
    receiver.requests.length = 0;
    await moved.getByTestId('send-test').click();
    const [sent] = await receiver.waitFor(1, 10_000);
    expect(sent.path).toBe('/new-path');
    await page.close();
  });

  it('an inbox item that is not a webhook delivery says what it is about, without a Replay', async () => {
    const { withSystem } = await import('../../src/platform/db/tenant.js');
    const { sql } = await import('drizzle-orm');
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`INSERT INTO inbox_items (workspace_id, id, kind, event_type, last_error)
                     VALUES (${workspace.id}, 'inb_mailtest', 'mail.undeliverable', 'mail.send',
                             'Mail job_x to 2 recipients was not delivered in 3 days: relay answered 503')`),
    );
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/webhooks');
    const row = page.getByTestId('inbox-row').filter({ hasText: 'relay answered 503' });
    await row.waitFor();
    expect(await row.getByTestId('inbox-about').textContent()).toBe('Mail (not delivered)');
    expect(await row.getByText('deleted endpoint').count()).toBe(0);
    expect(await row.getByTestId('inbox-replay').count()).toBe(0);

    // Nothing to replay, but the admin can resolve it: it leaves the open list, and Handled says who and when.
    await row.getByTestId('inbox-resolve').click();
    await page.getByText('is resolved; it moved to Handled').waitFor();
    await expect.poll(() => row.count()).toBe(0);
    await page.getByTestId('inbox-filter').selectOption('handled');
    const resolved = page.locator('[data-testid="inbox-row"][data-state="resolved"]').filter({
      hasText: 'relay answered 503',
    });
    await resolved.waitFor();
    expect(await resolved.getByTestId('inbox-state').textContent()).toBe('Resolved');
    expect(await resolved.getByTestId('inbox-handled-by').textContent()).toContain(`by ${workspace.admin.name}`);
    expect(await resolved.getByTestId('inbox-resolve').count()).toBe(0);
    // All shows it too; a reload starts on the open items again.
    await page.getByTestId('inbox-filter').selectOption('all');
    await resolved.waitFor();
    await page.reload();
    await page.getByText('Nothing needs attention').waitFor();
    // Resolved by mistake: Reopen puts it back among the open items.
    await page.getByTestId('inbox-filter').selectOption('handled');
    await resolved.getByTestId('inbox-reopen').click();
    await page.getByText('is open again').waitFor();
    await page.getByTestId('inbox-filter').selectOption('open');
    const reopened = page.locator('[data-testid="inbox-row"][data-state="open"]').filter({
      hasText: 'relay answered 503',
    });
    await reopened.waitFor();
    expect(await reopened.getByTestId('inbox-resolve').count()).toBe(1);
    await page.reload();
    expect(await page.getByTestId('inbox-filter').inputValue()).toBe('open');
    await page.close();
  });

  it('explains the tier requirement below Advanced as information, not as an error', async () => {
    const standard = await harness.createWorkspace({ tier: 'standard' });
    const page = await harness.newPage();
    await signIn(page, standard.admin.email, standard.admin.password);
    await page.goto('/admin/webhooks');
    const notice = page.getByTestId('tier-notice');
    await notice.waitFor();
    const text = (await notice.textContent()) ?? '';
    // What webhooks are, which plans have them, this workspace's plan and who changes it.
    expect(text).toContain('Advanced');
    expect(text).toMatch(/signed/i);
    expect(text).toContain('Standard');
    expect(text).toMatch(/Atrium contact/);
    // Not the red error box of a failed request: no alert, no request id.
    expect(await notice.getAttribute('class')).toContain('notice-info');
    expect(await notice.getAttribute('role')).not.toBe('alert');
    expect(text).not.toMatch(/request id|req_/i);
    expect(await page.locator('main [role="alert"], main .notice-error').count()).toBe(0);
    await notice.getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL('**/admin/settings');
    await page.close();
  });
});
