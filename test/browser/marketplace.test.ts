import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

/** Installs skills through the API as the signed-in admin. */
async function installSkills(page: Page, installs: { slug: string; scopes: string[] }[]) {
  await page.evaluate(async (list) => {
    for (const install of list) {
      const response = await fetch('/api/v1/marketplace/install', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify(install),
      });
      if (!response.ok) throw new Error(`install ${install.slug}: ${response.status}`);
    }
  }, installs);
}

describe('marketplace page', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('browses, installs with opt-in scopes, chats with the offline model and uninstalls', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.getByTestId('nav-marketplace').click();
    await expect
      .poll(() => page.getByTestId('install-count').textContent())
      .toContain('0 of 5 skills in use on the Standard plan');
    await expect.poll(() => page.getByTestId('skill-tile').count()).toBeGreaterThanOrEqual(8);

    // Search narrows the catalog.
    await page.getByLabel('Search skills').fill('billing code');
    await expect.poll(() => page.getByTestId('skill-tile').count()).toBe(1);
    await page.getByTestId('skill-tile').first().click();

    // Detail: tools (under Technical details) and the access it asks for, with the reasons.
    const detail = page.getByTestId('skill-detail');
    await detail.waitFor();
    expect(await detail.textContent()).toContain('Billing code suggestions');
    await expect.poll(() => detail.getByTestId('detail-tool').count()).toBe(2);
    expect(await detail.getByTestId('detail-scope').first().textContent()).toContain('Can read a stored visit note');

    // The install dialog traps focus, closes on Escape and gives focus back to its opener.
    const opener = page.getByTestId('open-install');
    await opener.focus();
    await page.keyboard.press('Enter');
    const trap = page.getByTestId('install-dialog');
    await trap.waitFor();
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      expect(await trap.evaluate((el) => el.contains(document.activeElement))).toBe(true);
    }
    await page.keyboard.press('Escape');
    await expect.poll(() => trap.count()).toBe(0);
    // Focus comes back when the dialog's focus scope unmounts, which may be a moment after it left the page.
    await expect.poll(() => opener.evaluate((el) => el === document.activeElement)).toBe(true);

    // Install dialog: opt out of patients:read; only the pasted-text task stays usable.
    await page.getByTestId('open-install').click();
    const dialog = page.getByTestId('install-dialog');
    await dialog.waitFor();
    const scope = dialog.getByTestId('scope-patients:read');
    expect(await scope.isChecked()).toBe(true);
    // Scopes are React Aria checkboxes of the kit's normal size (not stretched by a text-input rule).
    const box = await scope.locator('.checkbox-box').boundingBox();
    expect(box && Math.round(box.width) <= 20 && Math.round(box.height) <= 20).toBe(true);
    expect(await axeProblems(page, '[data-testid="install-dialog"]')).toEqual([]);
    await scope.uncheck();
    expect(await dialog.getByTestId('usable-tools').textContent()).toBe(
      'With this access it can do 1 of its 2 tasks:Suggest CPT and ICD-10-CM codes for the clinical note text given.',
    );
    await dialog.getByTestId('confirm-install').click();
    await page.getByTestId('success-notice').waitFor();
    await page.locator('[data-testid="installed-item"][data-slug="billing-codes"]').waitFor();
    await expect
      .poll(() => page.getByTestId('install-count').textContent())
      .toContain('1 of 5 skills in use on the Standard plan');

    // Chat: the offline model calls the granted tool through the dispatcher.
    await page.getByTestId('chat-input').fill('Suggest billing codes: follow-up visit for hypertension');
    await page.getByTestId('chat-send').click();
    const answer = page.getByTestId('chat-assistant').last();
    await answer.waitFor();
    expect(await answer.getByTestId('offline-model').textContent()).toBe('Offline model');
    // The call is a card in plain words: what was done and the outcome, never the tool's name.
    const card = (await answer.getByTestId('tool-call').textContent()) ?? '';
    expect(card).toContain('Suggest codes');
    expect(card).toContain('Done');
    expect(card).not.toContain('suggest_codes');
    expect(await answer.textContent()).toContain('I10');
    // Reopened after a reload, the answer still says which model gave it.
    await page.reload();
    await page.getByTestId('chat-history').selectOption({ index: 1 });
    await expect
      .poll(() => page.getByTestId('chat-assistant').last().getByTestId('offline-model').textContent())
      .toBe('Offline model');

    // Uninstall: the tools are gone from the chat at once.
    const item = page.locator('[data-testid="installed-item"][data-slug="billing-codes"]');
    // Listed by its name, not its id; uninstalling asks first.
    expect(await item.locator('strong').textContent()).not.toBe('billing-codes');
    await item.getByTestId('uninstall').click();
    await page.getByTestId('confirm-uninstall').click();
    await expect.poll(() => page.getByTestId('installed-item').count()).toBe(0);
    await expect
      .poll(() => page.getByTestId('install-count').textContent())
      .toContain('0 of 5 skills in use on the Standard plan');
    await page.getByTestId('chat-input').fill('Suggest billing codes: follow-up visit for hypertension');
    await page.getByTestId('chat-send').click();
    await expect.poll(() => page.getByTestId('chat-assistant').count()).toBe(2);
    expect(await page.getByTestId('chat-assistant').last().getByTestId('tool-call').count()).toBe(0);
  });

  it('answers plain language with readable cards and keeps the conversation on the server', async () => {
    const clinic = await harness.createWorkspace({ tier: 'standard' });
    const page = await harness.newPage();
    await signIn(page, clinic.admin.email, clinic.admin.password);
    await page.evaluate(async () => {
      const post = (url: string, body: unknown) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: JSON.stringify(body),
        }).then((r) => r.json() as Promise<{ id: string }>);
      await post('/api/v1/marketplace/install', { slug: 'billing-codes', scopes: ['patients:read'] });
      const maria = await post('/api/v1/patients', {
        givenName: 'Maria',
        familyName: 'Lopez',
        dateOfBirth: '1980-03-02',
      });
      await post('/api/v1/notes', { patientId: maria.id, assessment: 'Essential hypertension, follow-up visit' });
    });
    await page.goto('/marketplace');
    await page.getByTestId('chat-input').fill("Suggest billing codes for Maria Lopez's last note");
    await page.getByTestId('chat-send').click();
    const answer = page.getByTestId('chat-assistant').last();
    await answer.waitFor();
    const cards = await answer.getByTestId('tool-call').allTextContents();
    expect(cards[0]).toContain('Patient lookup');
    expect(cards[0]).toContain('Maria Lopez');
    expect(cards[1]).toContain('Suggest codes for note');
    expect(await answer.textContent()).toContain('I10');
    expect(await page.getByTestId('chat-panel').textContent()).not.toMatch(/\bpat_|suggest_codes|__/);

    // Kept on the server: another browser of the same user resumes it, cards included.
    const elsewhere = await harness.newPage();
    await signIn(elsewhere, clinic.admin.email, clinic.admin.password);
    await elsewhere.goto('/marketplace');
    await elsewhere
      .getByTestId('chat-history')
      .selectOption({ label: "Suggest billing codes for Maria Lopez's last note" });
    await expect.poll(() => elsewhere.getByTestId('chat-assistant').count()).toBe(1);
    expect(await elsewhere.getByTestId('chat-assistant').textContent()).toContain('I10');
    expect(await elsewhere.getByTestId('tool-call').count()).toBe(2);
  });

  it('Free workspaces browse but cannot install', async () => {
    const free = await harness.createWorkspace({ tier: 'free' });
    const page = await harness.newPage();
    await signIn(page, free.admin.email, free.admin.password);
    await page.getByTestId('nav-marketplace').click();
    await page.getByTestId('free-banner').waitFor();
    await page.getByTestId('skill-tile').first().click();
    await page.getByTestId('tier-hint').waitFor();
    expect(await page.getByTestId('tier-hint').textContent()).toContain('Your Atrium contact changes your plan.');
    expect(await page.getByTestId('open-install').count()).toBe(0);
  });
});

describe('marketplace review findings', () => {
  let harness: BrowserHarness;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('a workspace switch starts a new conversation in the new workspace', async () => {
    const riverside = await harness.createWorkspace({ name: `Riverside ${uniqueSuffix()}`, tier: 'standard' });
    const harbor = await harness.createWorkspace({ name: `Harbor ${uniqueSuffix()}`, tier: 'standard' });
    await harness.addMember(harbor.id, { email: riverside.admin.email, name: riverside.admin.name, role: 'admin' });
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await page.getByLabel('Switch workspace').selectOption(riverside.id);
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(riverside.name);
    await page.goto('/marketplace');
    await page.getByTestId('chat-input').fill('hello from Riverside');
    await page.getByTestId('chat-send').click();
    await expect.poll(() => page.getByTestId('chat-assistant').count()).toBe(1);
    // A past conversation picked from the list (a fresh load, as the reviewer did).
    await page.reload();
    await page.getByTestId('chat-history').selectOption({ label: 'hello from Riverside' });
    await expect.poll(() => page.getByTestId('chat-assistant').count()).toBe(1);

    await page.getByLabel('Switch workspace').selectOption(harbor.id);
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(harbor.name);
    await expect.poll(() => page.getByTestId('chat-user').count()).toBe(0);
    await page.getByTestId('chat-input').fill('Check Eleanor Vance insurance eligibility');
    await page.getByTestId('chat-send').click();
    // Answered in a conversation of Harbor's (it used to post to Riverside's: "Conversation not found").
    await expect.poll(() => page.getByTestId('chat-assistant').count()).toBe(1);
    expect(await page.getByTestId('chat-panel').textContent()).not.toContain('could not answer');
    expect(await page.getByTestId('chat-user').allTextContents()).toEqual([
      'Check Eleanor Vance insurance eligibility',
    ]);
  });

  it('the keyboard focus stays in the installed list after an uninstall', async () => {
    const clinic = await harness.createWorkspace({ tier: 'standard' });
    const page = await harness.newPage();
    await signIn(page, clinic.admin.email, clinic.admin.password);
    await installSkills(page, [
      { slug: 'billing-codes', scopes: ['patients:read'] },
      { slug: 'soap-structurer', scopes: [] },
    ]);
    await page.goto('/marketplace');
    const list = page.getByTestId('installed-list');
    await expect.poll(() => list.getByTestId('uninstall').count()).toBe(2);
    const [first, second] = await list
      .getByTestId('uninstall')
      .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label') ?? ''));

    // Keyboard: the first item's Uninstall, Enter, then Enter on the dialog's Uninstall.
    await list.getByRole('button', { name: first }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('confirm-uninstall').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => list.getByTestId('uninstall').count()).toBe(1);
    // Onto the next item's button (it used to fall to the page).
    await expect
      .poll(() =>
        page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.tagName),
      )
      .toBe(second);

    // The last one: the list's heading.
    await page.keyboard.press('Enter');
    await page.getByTestId('confirm-uninstall').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => list.getByTestId('uninstall').count()).toBe(0);
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Installed');
  });

  it('a message over the limit says so in plain words before it is sent', async () => {
    const clinic = await harness.createWorkspace({ tier: 'standard' });
    const page = await harness.newPage();
    await signIn(page, clinic.admin.email, clinic.admin.password);
    await page.goto('/marketplace');
    let posted = 0;
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().includes('/chat/')) posted++;
    });
    const input = page.getByTestId('chat-input');
    await input.fill('x'.repeat(21_000));
    const problem = page.getByTestId('chat-too-long');
    await expect
      .poll(() => problem.textContent())
      .toBe('This message is too long. Keep it to 10000 characters or fewer.');
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect(await input.getAttribute('aria-describedby')).toBe(await problem.getAttribute('id'));
    // Send keeps it here (nothing is posted) with the focus in the box.
    await page.getByTestId('chat-send').click();
    expect(posted).toBe(0);
    expect(await input.inputValue()).toHaveLength(21_000);
    expect(await input.evaluate((el) => el === document.activeElement)).toBe(true);
    // Cut to the limit, the words go and it is sent.
    await input.fill('Hello there '.padEnd(10_000, '.'));
    await expect.poll(() => problem.count()).toBe(0);
    await page.getByTestId('chat-send').click();
    await expect.poll(() => page.getByTestId('chat-assistant').count()).toBe(1);
  });

  it('a member reads that an installed skill is installed, and the install hint only for others', async () => {
    const clinic = await harness.createWorkspace({ tier: 'standard' });
    const admin = await harness.newPage();
    await signIn(admin, clinic.admin.email, clinic.admin.password);
    await installSkills(admin, [{ slug: 'billing-codes', scopes: ['patients:read'] }]);
    const member = { email: `sam-${uniqueSuffix()}@example.test`, password: `pw-${uniqueSuffix()}-member` };
    await harness.addMember(clinic.id, { ...member, name: 'Sam Front', role: 'member' });
    const page = await harness.newPage();
    await signIn(page, member.email, member.password);
    await page.goto('/marketplace');
    const detail = page.getByTestId('skill-detail');

    await page.locator('[data-testid="skill-tile"][data-slug="billing-codes"]').click();
    await expect
      .poll(() => detail.getByTestId('member-hint').textContent())
      .toBe('Installed in this workspace. Workspace admins manage its access.');
    expect(await detail.textContent()).not.toContain('install skills');

    await page.locator('[data-testid="skill-tile"][data-slug="soap-structurer"]').click();
    await expect.poll(() => detail.locator('h2').textContent()).not.toBe('Billing code suggestions');
    await expect
      .poll(() => detail.getByTestId('member-hint').textContent())
      .toBe('Ask a workspace admin to install this skill.');
  });
});
