/**
 * Keyboard only: where the focus goes when a page changes within a section (list → record → list →
 * new patient → cancel), when sign-in refuses, and when a form refuses a field; what the patient search
 * says to a screen reader, and that two patients of the same name have record links that tell them apart.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, unlessAlreadyHandled } from './harness.js';

interface Focused {
  tag: string;
  id: string;
  testId: string;
  name: string;
  text: string;
}

const focused = (page: Page): Promise<Focused> =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return {
      tag: el?.tagName ?? '',
      id: el?.id ?? '',
      testId: el?.getAttribute('data-testid') ?? '',
      name: el?.getAttribute('aria-label') ?? el?.getAttribute('name') ?? '',
      text: el?.textContent?.trim() ?? '',
    };
  });

/** Presses Tab until `match` holds for the focused element (at most `limit` presses). */
async function tabTo(page: Page, match: (el: Focused) => boolean, limit = 60): Promise<Focused> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    const el = await focused(page);
    if (match(el)) return el;
  }
  throw new Error(`Tab never reached the element (${limit} presses)`);
}

/** The text of the elements an element's aria-describedby names. */
const description = (page: Page, selector: string) =>
  page.evaluate((sel) => {
    const ids = document.querySelector(sel)?.getAttribute('aria-describedby')?.split(/\s+/) ?? [];
    return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
  }, selector);

describe('keyboard and screen reader', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.evaluate(async () => {
      for (const body of [
        { givenName: 'Priya', familyName: 'Natarajan', dateOfBirth: '1985-04-12' },
        { givenName: 'Marcus', familyName: 'Okafor', dateOfBirth: '1971-09-03', mrn: 'OK-1' },
        { givenName: 'Marcus', familyName: 'Okafor', dateOfBirth: '2004-02-17' },
      ]) {
        await fetch('/api/v1/patients', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: JSON.stringify(body),
        });
      }
    });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('puts the focus on the new page when the page changes within a section, and back on New patient after Cancel', async () => {
    const page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 860 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients');
    await page.getByTestId('patient-row').first().waitFor();

    // List → record: the link that had the focus is gone with the list; the page takes it.
    await tabTo(page, (el) => el.name.startsWith("Open Priya Natarajan's record"));
    await page.keyboard.press('Enter');
    await page.getByTestId('patient-record').waitFor();
    await expect.poll(async () => (await focused(page)).id).toBe('main');

    // Record → list by the breadcrumb.
    await tabTo(page, (el) => el.tag === 'A' && el.text === 'Patients' && el.testId === '');
    await page.keyboard.press('Enter');
    await page.getByTestId('patient-row').first().waitFor();
    await expect.poll(async () => (await focused(page)).id).toBe('main');

    // New patient opens the form on its first field; Cancel gives the focus back to New patient.
    await tabTo(page, (el) => el.testId === 'new-patient');
    await page.keyboard.press('Enter');
    await page.getByTestId('patient-form').waitFor();
    await expect.poll(async () => (await focused(page)).name).toBe('givenName');
    await tabTo(page, (el) => el.tag === 'BUTTON' && el.text === 'Cancel');
    await page.keyboard.press('Enter');
    await page.getByTestId('patient-form').waitFor({ state: 'detached' });
    await expect.poll(async () => (await focused(page)).testId).toBe('new-patient');

    // Another section from the navigation: the page still takes the focus (the link stays in the sidebar)...
    await tabTo(page, (el) => el.testId === 'nav-admin-members');
    await page.keyboard.press('Enter');
    await page.getByTestId('members-table').waitFor();
    await expect.poll(async () => (await focused(page)).id).toBe('main');
    // ...and so does another page of the same section.
    await tabTo(page, (el) => el.testId === 'nav-admin-audit');
    await page.keyboard.press('Enter');
    await page.getByTestId('audit-table').waitFor();
    await expect.poll(async () => (await focused(page)).id).toBe('main');
  });

  it('keeps the focus on Sign in while it runs and after a refusal; a second press sends nothing', async () => {
    const page = await harness.newPage();
    let attempts = 0;
    // Slow answers, so the focus can be looked at while the request runs.
    await page.route('**/api/v1/auth/sign-in', async (route) => {
      attempts++;
      await new Promise((resolve) => setTimeout(resolve, 800));
      await route.continue().catch(unlessAlreadyHandled);
    });
    await page.goto('/');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expect.poll(async () => (await focused(page)).name).toBe('email');
    await page.keyboard.type(workspace.admin.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('not-the-password');
    await tabTo(page, (el) => el.testId === 'sign-in-submit', 3);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('sign-in-submit').getAttribute('aria-disabled')).toBe('true');
    expect((await focused(page)).testId).toBe('sign-in-submit');
    await page.keyboard.press('Enter');
    await page.getByTestId('sign-in-error').waitFor();
    expect(await page.getByTestId('sign-in-error').textContent()).toContain('Could not sign you in');
    expect((await focused(page)).testId).toBe('sign-in-submit');
    expect(attempts).toBe(1);
  });

  it('marks an e-mail that is not an address invalid, links it to the message and focuses it', async () => {
    const page = await harness.newPage();
    await page.goto('/');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expect.poll(async () => (await focused(page)).name).toBe('email');
    await page.keyboard.type('admin@riverside');
    await page.keyboard.press('Tab');
    await page.keyboard.type('some-password');
    await page.keyboard.press('Enter');
    await page.getByTestId('sign-in-error').waitFor();
    const email = page.getByRole('textbox', { name: 'E-mail' });
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect(await description(page, 'input[name="email"]')).toContain('Enter an e-mail address like name@example.com');
    expect((await focused(page)).name).toBe('email');
    // The password was not refused.
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBeNull();
  });

  it('focuses the first field the new-patient form refuses', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients/new');
    await page.getByTestId('patient-form').waitFor();
    await expect.poll(async () => (await focused(page)).name).toBe('givenName');
    await tabTo(page, (el) => el.testId === 'patient-form-submit');
    await page.keyboard.press('Enter');
    await page.getByTestId('field-error-givenName').waitFor();
    expect((await focused(page)).name).toBe('givenName');
    expect(await page.getByRole('textbox', { name: 'Given name' }).getAttribute('aria-invalid')).toBe('true');
    expect(await description(page, 'input[name="givenName"]')).toBe('Enter the given name');

    // With the given name filled in, the family name is the first refused.
    await page.keyboard.type('Ada');
    await tabTo(page, (el) => el.testId === 'patient-form-submit');
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await focused(page)).name).toBe('familyName');
    expect(await description(page, 'input[name="familyName"]')).toBe('Enter the family name');
    expect(await page.getByTestId('field-error-givenName').count()).toBe(0);
  });

  it('says what a patient search found in a status region that stays, and tells two same-named patients apart', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/patients');
    await page.getByTestId('patient-row').first().waitFor();
    const region = page.getByTestId('patient-search-status');
    expect(await region.getAttribute('role')).toBe('status');
    // Nothing is said before a search.
    expect(await region.textContent()).toBe('');
    const regionHandle = await region.elementHandle();

    await page.getByTestId('patient-search').fill('zzzz');
    await expect.poll(() => region.textContent()).toBe('No patients match “zzzz”.');
    await page.getByTestId('empty-state').waitFor();
    // The same region, not one added with the words (which a screen reader would not read).
    expect(await regionHandle?.evaluate((el) => el.isConnected)).toBe(true);

    await page.getByTestId('patient-search').fill('Okafor');
    await expect.poll(() => region.textContent()).toBe('2 patients match “Okafor”.');
    // One: "matches" (it said "1 patient match").
    await page.getByTestId('patient-search').fill('Priya');
    await expect.poll(() => region.textContent()).toBe('1 patient matches “Priya”.');
    await page.getByTestId('patient-search').fill('Okafor');
    await expect.poll(() => region.textContent()).toBe('2 patients match “Okafor”.');
    expect(await regionHandle?.evaluate((el) => el.isConnected)).toBe(true);

    const older = page.getByRole('link', { name: "Open Marcus Okafor's record, born Sep 3, 1971" });
    const younger = page.getByRole('link', { name: "Open Marcus Okafor's record, born Feb 17, 2004" });
    expect(await older.count()).toBe(1);
    expect(await younger.count()).toBe(1);
  });
});
