// UX review of a new clinic's first day (findings 3 and 8): one plan notice, in the same words on every page a plan
// limits, telling an admin that their Atrium contact changes the plan and a member which admin to ask; Settings says
// what the plan includes and what the next adds; the Marketplace speaks of access in plain words.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

/** No page-wide horizontal scroll (a phone's 390 px). */
const fitsWidth = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

/** Never in the UI: "tier", an upgrade no one in the clinic can make, "(admins)", a plan's name in lower case. */
const WRONG = /\btier\b|upgrade|\(admins\)/i;
const LOWER_CASE_PLAN = /\b(free|standard|advanced|enterprise) plan/;

describe('plan notices', () => {
  let harness: BrowserHarness;
  let free: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    free = await harness.createWorkspace({ tier: 'free', name: `Maple Clinic ${uniqueSuffix()}` });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('an admin on Free reads one wording on Inbox, Messages and Marketplace: what it is, its plan, whom to ask', async () => {
    for (const phone of [false, true]) {
      const page = await harness.newPage({ phone });
      await signIn(page, free.admin.email, free.admin.password);
      for (const [path, testId, words] of [
        ['/inbox', 'inbox-free', 'Patients’ messages come with the Standard plan'],
        ['/messages', 'free-tier-banner', 'Sending messages comes with the Standard plan'],
        ['/marketplace', 'free-banner', 'Installing skills comes with the Standard plan'],
      ] as const) {
        await page.goto(path);
        const notice = page.getByTestId(testId);
        await notice.waitFor();
        const text = (await notice.textContent()) ?? '';
        expect(text).toContain(words);
        expect(text).toContain(`Included in the Standard plan and above; ${free.name} is on the Free plan.`);
        expect(text).toContain('Your Atrium contact changes your plan.');
        expect(text).not.toMatch(WRONG);
        expect(text).not.toMatch(LOWER_CASE_PLAN);
        expect(await notice.getAttribute('class')).toContain('notice-info');
        expect(await notice.getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('/admin/settings');
        expect(await axeProblems(page, `[data-testid="${testId}"]`)).toEqual([]);
        expect(await fitsWidth(page)).toBe(true);
      }
      await page.close();
    }
  });

  it('Messages on Free offers no New message and no "(admins)" in its search', async () => {
    const page = await harness.newPage();
    await signIn(page, free.admin.email, free.admin.password);
    await page.goto('/messages');
    await page.getByTestId('free-tier-banner').waitFor();
    expect(await page.getByTestId('new-message').count()).toBe(0);
    const empty = (await page.locator('.messages-sidebar').textContent()) ?? '';
    expect(empty).toContain('No conversations yet');
    expect(empty).toContain('Messages colleagues send you appear here.');
    expect(empty).not.toContain('New message');
    expect(await page.getByTestId('message-search').getAttribute('placeholder')).toBe('Search all messages');
  });

  it('a member is told to ask an admin of the workspace, by name', async () => {
    const suffix = uniqueSuffix();
    const member = { email: `desk-${suffix}@example.test`, password: `pw-${suffix}-member`, name: `Desk ${suffix}` };
    await harness.addMember(free.id, { ...member, role: 'member' });
    const page = await harness.newPage({ phone: true });
    await signIn(page, member.email, member.password);
    for (const [path, testId] of [
      ['/inbox', 'inbox-free'],
      ['/messages', 'free-tier-banner'],
      ['/marketplace', 'free-banner'],
    ] as const) {
      await page.goto(path);
      const contact = page.getByTestId(testId).getByTestId('plan-contact');
      await expect
        .poll(() => contact.textContent())
        .toBe(`Ask an admin of ${free.name} (${free.admin.name}) to change the plan.`);
      expect(await page.getByTestId(testId).getByRole('link', { name: 'Settings' }).count()).toBe(0);
    }
    expect(await fitsWidth(page)).toBe(true);
  });

  it('Webhooks below Advanced uses the same notice', async () => {
    const standard = await harness.createWorkspace({ tier: 'standard' });
    const page = await harness.newPage();
    await signIn(page, standard.admin.email, standard.admin.password);
    await page.goto('/admin/webhooks');
    const text = (await page.getByTestId('tier-notice').textContent()) ?? '';
    expect(text).toContain('Webhooks come with the Advanced plan');
    expect(text).toContain(`Included in the Advanced plan and above; ${standard.name} is on the Standard plan.`);
    expect(text).toContain('Your Atrium contact changes your plan.');
  });

  it('Settings shows what the plan includes, what the next one adds, and who changes it', async () => {
    for (const phone of [false, true]) {
      const page = await harness.newPage({ phone });
      await signIn(page, free.admin.email, free.admin.password);
      await page.goto('/admin/settings');
      const panel = page.getByTestId('plan-panel');
      await panel.waitFor();
      expect(await panel.getByRole('heading', { level: 3 }).allTextContents()).toEqual([
        'The Free plan includes',
        'The Standard plan adds',
      ]);
      const includes = await panel.getByTestId('plan-includes').locator('li').allTextContents();
      expect(includes).toContain('Repeating appointments');
      expect(includes).not.toContain('Sending messages to colleagues');
      const adds = await panel.getByTestId('plan-adds').locator('li').allTextContents();
      expect(adds).toContain('Sending messages to colleagues');
      expect(adds).toContain('Up to 5 skills in use');
      expect(await panel.getByTestId('plan-who').textContent()).toBe('Your Atrium contact changes your plan.');
      expect(await panel.textContent()).not.toMatch(/\btier\b|upgrade/i);
      expect(await axeProblems(page, '[data-testid="plan-panel"]')).toEqual([]);
      expect(await fitsWidth(page)).toBe(true);
      await page.close();
    }
  });
});

describe('marketplace in plain words', () => {
  let harness: BrowserHarness;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('says what a skill can do and the access it asks for in words, the technical names only under details', async () => {
    const clinic = await harness.createWorkspace({ tier: 'standard' });
    // The phone first: only the desktop run installs.
    for (const phone of [true, false]) {
      const page = await harness.newPage({ phone });
      await signIn(page, clinic.admin.email, clinic.admin.password);
      await page.goto('/marketplace');
      await expect
        .poll(() => page.getByTestId('install-count').textContent())
        .toBe('0 of 5 skills in use on the Standard plan');
      const tile = page.locator('[data-testid="skill-tile"][data-slug="patient-lookup"]');
      expect(await tile.textContent()).toContain('Standard plan');
      expect(await tile.textContent()).not.toMatch(/\bid\b|standard\+/);
      await tile.click();
      const detail = page.getByTestId('skill-detail');
      await expect.poll(() => detail.locator('h2').textContent()).toBe('Patient lookup');
      // What is shown (innerText: the closed details' content is not): no scope ids, tool names or version.
      const shown = await detail.evaluate((el) => (el as HTMLElement).innerText);
      expect(shown).toContain('See patient records');
      expect(shown).toContain('Can look up patients by name or MRN');
      expect(shown).not.toMatch(/patients:read|find_patient|v1\.0\.0|Version/);
      // Admins who need them find them under Technical details.
      await detail.getByText('Technical details').click();
      expect(await detail.getByTestId('technical-details').textContent()).toMatch(/find_patient.*patients:read/s);
      expect(await detail.getByTestId('technical-details').textContent()).toContain('Version 1.0.0');
      expect(await axeProblems(page, '[data-testid="skill-detail"]')).toEqual([]);

      // The install dialog: each access in words (the id small beside it), and what the skill can do with it.
      await page.locator('[data-testid="skill-tile"][data-slug="billing-codes"]').click();
      await expect.poll(() => detail.locator('h2').textContent()).toBe('Billing code suggestions');
      await page.getByTestId('open-install').click();
      const dialog = page.getByTestId('install-dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('See patient records');
      const usable = dialog.getByTestId('usable-tools');
      expect(await usable.textContent()).toContain('With this access it can do all its tasks:');
      expect(await usable.textContent()).not.toMatch(/suggest_codes|Usable tools/);
      await dialog.getByTestId('scope-patients:read').uncheck();
      expect(await usable.textContent()).toContain('With this access it can do 1 of its 2 tasks:');
      expect(await usable.locator('li').allTextContents()).toEqual([
        'Suggest CPT and ICD-10-CM codes for the clinical note text given.',
      ]);
      await dialog.getByTestId('scope-patients:read').check();
      expect(await axeProblems(page, '[data-testid="install-dialog"]')).toEqual([]);
      expect(await fitsWidth(page)).toBe(true);
      if (phone) {
        await page.keyboard.press('Escape');
      } else {
        await dialog.getByTestId('confirm-install').click();
        const item = page.locator('[data-testid="installed-item"][data-slug="billing-codes"]');
        await expect.poll(() => item.getByTestId('installed-access').textContent()).toBe('See patient records');
        expect(await item.textContent()).not.toMatch(/v1\.0\.0|patients:read/);
        await expect
          .poll(() => page.getByTestId('install-count').textContent())
          .toBe('1 of 5 skills in use on the Standard plan');
      }
      await page.close();
    }
  });

  it('below a skill’s plan an admin reads which plan installs it and whom to ask, not "Upgrade"', async () => {
    const clinic = await harness.createWorkspace({ tier: 'standard' });
    const page = await harness.newPage();
    await signIn(page, clinic.admin.email, clinic.admin.password);
    await page.goto('/marketplace');
    await page.locator('[data-testid="skill-tile"][data-slug="patient-intake"]').click();
    await expect
      .poll(() => page.getByTestId('tier-hint').textContent())
      .toBe(
        `Installing this skill needs the Advanced plan; ${clinic.name} is on the Standard plan. Your Atrium contact changes your plan.`,
      );
  });
});
