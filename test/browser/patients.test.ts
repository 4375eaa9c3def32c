import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

const seriousViolations = async (page: Page) =>
  (await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);

const focusedTestId = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);

async function createPatient(page: Page, body: Record<string, string>): Promise<{ id: string; mrn: string | null }> {
  return page.evaluate(async (input) => {
    const response = await fetch('/api/v1/patients', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
      body: JSON.stringify(input),
    });
    return (await response.json()) as { id: string; mrn: string | null };
  }, body);
}

const countPatients = (page: Page, familyName: string) =>
  page.evaluate(
    async (q) =>
      ((await (await fetch(`/api/v1/patients?q=${encodeURIComponent(q)}`)).json()) as { items: unknown[] }).items
        .length,
    familyName,
  );

describe('patients page', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('creates a patient, lists it, finds it by search and edits it', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.getByTestId('nav-patients').click();
    await page.getByTestId('empty-state').waitFor();

    const family = `Lovelace${uniqueSuffix()}`;
    await page.getByTestId('new-patient').click();
    await page.getByLabel('Given name').fill('Ada');
    await page.getByLabel('Family name').fill(family);
    await page.getByLabel('Date of birth').fill('1990-12-10');
    await page.getByLabel('MRN').fill('MRN-1001');
    await page.getByRole('button', { name: 'Create patient' }).click();

    // Creating opens the new record, whose heading has the keyboard focus (the form it was on is gone).
    await page.getByText(`Created Ada ${family}`).first().waitFor();
    await page.getByTestId('patient-record').waitFor();
    expect(await page.getByTestId('record-name').textContent()).toBe(`Ada ${family}`);
    await expect.poll(() => focusedTestId(page)).toBe('record-name');

    // Back to the list: the new patient is there, and search narrows the list.
    await page.getByTestId('nav-patients').click();
    const row = page.getByTestId('patient-row').filter({ hasText: family });
    await row.waitFor();
    expect(await row.getByTestId('patient-name').textContent()).toBe(`${family}, Ada`);
    expect(await row.textContent()).toContain('MRN-1001');
    await page.getByLabel('Search patients').fill(family);
    await expect.poll(() => page.getByTestId('patient-row').count()).toBe(1);
    await page.getByLabel('Search patients').fill(`nobody-${uniqueSuffix()}`);
    await page.getByTestId('empty-state').waitFor();
    await page.getByLabel('Search patients').fill('');
    await row.waitFor();

    // The name opens the record; demographics are edited in place.
    await row.getByTestId('patient-name').click();
    const givenName = page.getByLabel('Given name');
    await expect.poll(() => givenName.inputValue()).toBe('Ada');
    expect(new URL(page.url()).pathname).toMatch(/^\/patients\/.+/);
    await givenName.fill('Augusta Ada');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(`Saved Augusta Ada ${family}`).first().waitFor();
    await expect.poll(() => page.getByTestId('record-name').textContent()).toBe(`Augusta Ada ${family}`);
  });

  it("says what is missing in plain words before sending, and puts the server's refusals next to their fields", async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients/new');
    await page.getByLabel('Family name').fill('Hopper');
    await page.getByRole('button', { name: 'Create patient' }).click();
    await page.getByTestId('field-error-givenName').waitFor();
    expect(await page.getByTestId('field-error-givenName').textContent()).toContain('Enter the given name');
    expect(await page.getByLabel('Given name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('patient-form-error').count()).toBe(0);

    // The MRN of the patient created above: the server refuses it, next to the MRN field.
    await page.getByLabel('Given name').fill('Grace');
    await page.getByLabel('MRN').fill('MRN-1001');
    await page.getByRole('button', { name: 'Create patient' }).click();
    await page.getByTestId('field-error-mrn').waitFor();
    // The refused field takes the focus, so it is read out with its message.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('mrn');
  });

  it('keeps the list search in the URL, so Back from a record finds it', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients');
    await page.getByLabel('Search patients').fill('Lovelace');
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('Lovelace');
    await page.getByTestId('patient-row').first().getByTestId('patient-name').click();
    await page.getByTestId('patient-record').waitFor();
    await page.goBack();
    await expect.poll(() => page.getByLabel('Search patients').inputValue()).toBe('Lovelace');
  });

  it('warns before registering a possible duplicate (same names ignoring case and birth date): open it or register anyway', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const family = `Vance${uniqueSuffix().replace(/[^a-z]/gi, '')}`;
    const existing = await createPatient(page, {
      givenName: 'Eleanor',
      familyName: family,
      dateOfBirth: '1958-03-14',
      mrn: `EV-${uniqueSuffix()}`,
    });
    // Same name, another birth date: not a duplicate.
    await createPatient(page, { givenName: 'Eleanor', familyName: family, dateOfBirth: '1960-01-01' });

    const fill = async () => {
      await page.getByLabel('Given name').fill('eleanor');
      await page.getByLabel('Family name').fill(family.toUpperCase());
      await page.getByLabel('Date of birth', { exact: true }).fill('1958-03-14');
      await page.getByRole('button', { name: 'Create patient' }).click();
    };
    await page.goto('/patients/new');
    await fill();
    const warning = page.getByTestId('duplicate-warning');
    await warning.waitFor();
    const words = await warning.textContent();
    expect(words).toContain('A patient with this name and date of birth already exists');
    expect(words).toContain(`Eleanor ${family}`);
    expect(words).toContain('Mar 14, 1958');
    expect(words).toContain(existing.mrn);
    expect(await page.getByTestId('duplicate-match').count()).toBe(1);
    // The warning takes the focus, so it is read out and its choices come next.
    expect(
      await page.evaluate(() => document.activeElement?.closest('[data-testid="duplicate-warning"]') !== null),
    ).toBe(true);
    expect(await countPatients(page, family)).toBe(2);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await page.setViewportSize({ width: 1280, height: 860 });

    // Changing a field drops the warning (it was about the values before).
    await page.getByLabel('Date of birth', { exact: true }).fill('1958-03-15');
    expect(await warning.count()).toBe(0);
    await page.getByLabel('Date of birth', { exact: true }).fill('1958-03-14');
    await page.getByRole('button', { name: 'Create patient' }).click();
    await page.getByTestId('open-duplicate').click();
    await page.getByTestId('patient-record').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/patients/${existing.id}`);
    // The record opens with its heading focused, as a new one does.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('record-name');
    expect(await countPatients(page, family)).toBe(2);

    // Register anyway: a second record, opened with its heading focused.
    await page.goto('/patients/new');
    await fill();
    await page.getByTestId('register-anyway').click();
    await page.getByText(`Created eleanor ${family.toUpperCase()}`).first().waitFor();
    await expect.poll(() => new URL(page.url()).pathname).not.toBe(`/patients/${existing.id}`);
    await expect.poll(() => focusedTestId(page)).toBe('record-name');
    expect(await countPatients(page, family)).toBe(3);
  });

  it('registers a baby born today where the clinic is, ahead of UTC (Auckland), and gives the age as 0', async () => {
    // A moment when it is already tomorrow in Auckland (20:00 UTC is 08:00 or 09:00 there), not in the future.
    const at = new Date();
    at.setUTCHours(20, 0, 0, 0);
    if (at.getTime() > Date.now()) at.setUTCDate(at.getUTCDate() - 1);
    const aucklandToday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Auckland' }).format(at);
    expect(aucklandToday).not.toBe(at.toISOString().slice(0, 10));

    const context = await harness.browser.newContext({
      baseURL: harness.baseUrl,
      locale: 'en-US',
      timezoneId: 'Pacific/Auckland',
    });
    try {
      const page = await context.newPage();
      await page.clock.setFixedTime(at);
      await signIn(page, workspace.admin.email, workspace.admin.password);
      await page.goto('/patients/new');
      const family = `Newborn${uniqueSuffix().replace(/[^a-z]/gi, '')}`;
      await page.getByLabel('Given name').fill('Aroha');
      await page.getByLabel('Family name').fill(family);
      await page.getByLabel('Date of birth', { exact: true }).fill(aucklandToday);
      await page.getByRole('button', { name: 'Create patient' }).click();
      await page.getByTestId('patient-record').waitFor();
      expect(await page.getByTestId('field-error-dateOfBirth').count()).toBe(0);
      await expect.poll(() => page.getByTestId('patient-record').textContent()).toContain('(0 years)');
    } finally {
      await context.close();
    }
  });
});
