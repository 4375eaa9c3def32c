/**
 * Times outside the calendar follow the clinic's zone too: with the workspace in America/New_York and the browser in
 * Tokyo, the patients list, the audit log and the record's notes read New York times, as the calendar does (they
 * read Tokyo's, so one record mixed two clocks). Without a workspace zone they stay the device's.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

const headers = { 'content-type': 'application/json', 'x-requested-with': 'fetch' };
const call = <T>(page: Page, method: string, path: string, body?: unknown) =>
  page.evaluate(
    async ({ method, path, body, headers }) => {
      const response = await fetch(`/api/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${await response.text()}`);
      return (await response.json()) as T;
    },
    { method, path, body, headers },
  );

/** What the page should print for `iso` in `zone` (the app's medium date + short time, en-US). */
const written = (iso: string, zone: string) =>
  new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: zone })
    .format(new Date(iso))
    .replace(/[\u202f\u00a0]/g, ' ');
const plain = (text: string | null) => (text ?? '').replace(/[\u202f\u00a0]/g, ' ');

describe('times in the clinic zone outside the calendar', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('the patients list and the audit log read New York times in a Tokyo browser; Tokyo without a zone', async () => {
    const page = await harness.newPage({ timezoneId: 'Asia/Tokyo' });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const patient = await call<{ id: string; updatedAt: string }>(page, 'POST', '/patients', {
      givenName: 'Ines',
      familyName: 'Clockwise',
    });
    const row = () => page.getByTestId('patient-row').filter({ hasText: 'Clockwise' });

    // No clinic zone: the device's (Tokyo).
    await page.goto('/patients');
    await row().waitFor();
    expect(plain(await row().textContent())).toContain(written(patient.updatedAt, 'Asia/Tokyo'));

    await call(page, 'PATCH', '/workspace', { timeZone: 'America/New_York' });
    await page.goto('/patients');
    await row().waitFor();
    expect(plain(await row().textContent())).toContain(written(patient.updatedAt, 'America/New_York'));
    expect(plain(await row().textContent())).not.toContain(written(patient.updatedAt, 'Asia/Tokyo'));

    const audit = await call<{ items: { at: string; action?: string }[] }>(page, 'GET', '/audit?kind=admin_action');
    const change = audit.items.find((item) => item.action === 'workspace.update');
    await page.goto('/admin/audit?kind=admin_action');
    await page.getByTestId('audit-table').waitFor();
    expect(plain(await page.getByTestId('audit-table').textContent())).toContain(
      written(change?.at ?? '', 'America/New_York'),
    );
  });
});
