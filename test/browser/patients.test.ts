import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

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

    // Creating opens the new record.
    await page.getByText(`Created Ada ${family}`).first().waitFor();
    await page.getByTestId('patient-record').waitFor();
    expect(await page.getByTestId('record-name').textContent()).toBe(`Ada ${family}`);

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
});
