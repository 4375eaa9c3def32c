/**
 * Workspace administration in the browser: invite → the invitation e-mail's link → a new account;
 * roles, the last-admin rule, removal; API tokens (secret shown once, revoke); the audit log with
 * filters and CSV; change password (wrong/weak/ok); forgot password → e-mail → reset page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

interface SentMail {
  to: string;
  subject: string;
  text: string;
}

describe('workspace administration', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;

  async function mailTo(address: string): Promise<SentMail> {
    for (let i = 0; i < 50; i++) {
      const response = await fetch(`${harness.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(address)}`);
      const body = (await response.json()) as { items: SentMail[] };
      if (body.items.length > 0) return body.items[body.items.length - 1];
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`no mail to ${address}`);
  }

  const linkIn = (text: string, path: string) => {
    const match = new RegExp(`https?://[^\\s]+${path}\\?token=[^\\s]+`).exec(text);
    if (!match) throw new Error(`no ${path} link in: ${text}`);
    const url = new URL(match[0]);
    return `${url.pathname}${url.search}`;
  };

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('invites someone who accepts by the e-mailed link; roles and the last-admin rule; removal', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/members');
    await page.getByTestId('members-table').waitFor();

    const email = `new-${uniqueSuffix()}@example.test`;
    await page.getByTestId('invite-member').click();
    const dialog = page.getByTestId('invite-dialog');
    // Someone already here, sent from the keyboard: the refusal sits under E-mail, and the focus goes there so
    // it is read out with the field (it stayed on the button, unheard).
    await dialog.getByLabel('E-mail').fill(workspace.admin.email);
    await dialog.getByLabel('Name').fill('Rosa Parks');
    await dialog.getByTestId('send-invitation').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => dialog.getByTestId('field-error-email').textContent()).toContain('already a member');
    const emailField = dialog.getByLabel('E-mail');
    await expect.poll(() => emailField.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await emailField.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await emailField.getAttribute('aria-describedby')) ?? '';
    const errorId = await dialog.getByTestId('field-error-email').getAttribute('id');
    expect(describedBy.split(' ')).toContain(errorId);
    await dialog.getByLabel('E-mail').fill(email);
    await dialog.getByLabel('Name').fill('Rosa Parks');
    await dialog.getByTestId('send-invitation').click();
    await page.getByText('Invitation sent').first().waitFor();
    const invited = page.getByTestId('member-row').filter({ hasText: 'Rosa Parks' });
    await expect.poll(() => invited.textContent()).toContain('Invited');

    // The e-mail greets by name and never shows an internal id; its link opens the public page.
    const mail = await mailTo(email);
    expect(mail.text).toContain('Rosa Parks');
    expect(mail.text).not.toMatch(/\b(usr|ws)_[a-z0-9]{6,}/);
    const invitee = await harness.newPage();
    await invitee.goto(linkIn(mail.text, '/accept-invitation'));
    await invitee.getByLabel('Password').first().fill('short');
    await invitee.getByRole('button', { name: 'Create my account' }).click();
    expect(await invitee.getByTestId('field-error-password').textContent()).toContain('12 characters');
    const password = `Violet-harbor-${uniqueSuffix()}-lantern`;
    await invitee.getByLabel('Password').first().fill(password);
    await invitee.getByLabel('Password again').fill(password);
    await invitee.getByRole('button', { name: 'Create my account' }).click();
    await invitee.getByTestId('user-menu').waitFor();
    expect(new URL(invitee.url()).pathname).toBe('/patients');

    // The same link a second time says so in plain words, on the public page, before any password is typed.
    const again = await harness.newPage();
    await again.goto(linkIn(mail.text, '/accept-invitation'));
    expect(await again.getByTestId('invitation-ended').textContent()).toContain('already been accepted');
    expect(await again.locator('input[type="password"]').count()).toBe(0);

    // Taking Admin away asks first; demoting the only admin is refused in plain words inside the dialog (and
    // next to the control once it is closed), and the role stays as it was.
    await page.reload();
    const me = page.getByTestId('member-row').filter({ hasText: '(you)' });
    await me.getByTestId('member-role').selectOption('member');
    const question = page.getByRole('alertdialog');
    expect(await question.getByRole('heading').textContent()).toBe('Stop being an admin?');
    await page.getByTestId('confirm-role').click();
    await expect.poll(() => question.getByTestId('confirm-error').textContent()).toContain('at least one admin');
    // Read out once: in the dialog, not also by the row behind it.
    expect(await me.getByTestId('member-error').count()).toBe(0);
    await page.keyboard.press('Escape');
    await question.waitFor({ state: 'detached' });
    await expect.poll(() => me.getByTestId('member-error').textContent()).toContain('at least one admin');
    expect(await me.getByTestId('member-error').getAttribute('role')).toBeNull();
    await expect.poll(() => me.getByTestId('member-role').inputValue()).toBe('admin');

    // Granting Admin asks first too: Keep changes nothing; confirming does, says so, and the focus stays on the role.
    const rosa = page.getByTestId('member-row').filter({ hasText: 'Rosa Parks' });
    const rosaRole = rosa.getByTestId('member-role');
    await rosaRole.focus();
    await rosaRole.selectOption('admin');
    expect(await question.getByRole('heading').textContent()).toBe('Make Rosa Parks an admin?');
    // The safe choice has the focus when the question opens.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await question.getByRole('button', { name: 'Cancel' }).click();
    await question.waitFor({ state: 'detached' });
    expect(await rosaRole.inputValue()).toBe('member');
    await expect.poll(() => rosaRole.evaluate((select) => select === document.activeElement)).toBe(true);
    await rosaRole.selectOption('admin');
    await page.getByTestId('confirm-role').click();
    await page.getByText('Rosa Parks is now an admin.').first().waitFor();
    await question.waitFor({ state: 'detached' });
    expect(await rosaRole.inputValue()).toBe('admin');
    await expect.poll(() => rosaRole.evaluate((select) => select === document.activeElement)).toBe(true);

    // The provider switch saves at once, says so, and keeps the focus (it used to drop to the page).
    const provider = rosa.getByTestId('member-provider');
    await provider.locator('input').focus();
    await page.keyboard.press('Space');
    await page.getByText('Rosa Parks is now a provider.').first().waitFor();
    await expect
      .poll(() =>
        provider.evaluate((label) => label.contains(document.activeElement) && document.activeElement !== label),
      )
      .toBe(true);
    await expect.poll(() => provider.locator('input').isChecked()).toBe(true);

    // Then remove her, from the keyboard: her session stops working at once, and the focus goes on to the next
    // row's Remove (the previous row's when hers was the last); it used to fall to the page with her row.
    const names = await page
      .getByTestId('member-row')
      .locator('th')
      .evaluateAll((cells) => cells.map((c) => c.querySelector('span')?.textContent ?? ''));
    const at = names.indexOf('Rosa Parks');
    const after = names.filter((n) => n !== 'Rosa Parks');
    const expected = after[at] ?? after[at - 1];
    await rosa.getByTestId('member-remove').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alertdialog').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.getByTestId('confirm-remove').evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByText('Rosa Parks was removed from the workspace.').first().waitFor();
    await expect.poll(() => rosa.count()).toBe(0);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe(`Remove ${expected}`);
    await invitee.reload();
    await invitee.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('creates an API token whose secret is shown once, uses it, and revokes it', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: /Account/ }).click();
    await page.getByTestId('password-form').waitFor();
    await page.getByLabel('New token name').fill('Billing export');
    await page.getByTestId('create-token').click();
    const secret = await page.getByTestId('token-secret').textContent();
    expect(secret).toBeTruthy();
    const me = await fetch(`${harness.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(me.status).toBe(200);
    // The shared Copy button: named for what it copies, and a toast says it was copied.
    await page.getByRole('button', { name: 'Copy token Billing export' }).click();
    await page.getByText('Token Billing export copied.').first().waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByTestId('token-item').filter({ hasText: 'Billing export' }).waitFor();
    expect(await page.content()).not.toContain(secret as string);
    // From the keyboard (Enter in the field, Escape on the secret): the field is empty again and says nothing
    // is wrong with it.
    await page.getByLabel('New token name').fill('Lab sync');
    await page.getByLabel('New token name').press('Enter');
    await page.getByTestId('token-secret').waitFor();
    await page.keyboard.press('Escape');
    await page.getByTestId('token-item').filter({ hasText: 'Lab sync' }).waitFor();
    expect(await page.getByLabel('New token name').inputValue()).toBe('');
    await page.waitForTimeout(200);
    expect(await page.getByTestId('field-error-name').count()).toBe(0);

    // Admins see every token of the workspace and can revoke it.
    await page.goto('/admin/tokens');
    const row = page.getByTestId('admin-token-row').filter({ hasText: 'Billing export' });
    await row.getByTestId('revoke-token').click();
    await page.getByTestId('confirm-revoke').click();
    await expect.poll(() => row.count()).toBe(0);
    const after = await fetch(`${harness.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(after.status).toBe(401);
  });

  it('filters the audit log and exports it as CSV', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/audit');
    await page.getByTestId('audit-table').waitFor();
    await page.getByLabel('Kind').selectOption('admin_action');
    await expect.poll(() => new URL(page.url()).searchParams.get('kind')).toBe('admin_action');
    await expect
      .poll(
        async () =>
          new Set(
            await page.getByTestId('audit-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind'))),
          ),
      )
      .toEqual(new Set(['admin_action']));
    const href = await page.getByTestId('audit-csv').getAttribute('href');
    expect(href).toContain('format=csv');
    expect(href).toContain('kind=admin_action');
    const csv = await page.evaluate(async (url) => (await fetch(url as string)).text(), href);
    expect(csv.split('\n')[0]).toContain('kind');
    expect(csv.split('\n')[0]).toContain('actorName');
    expect(csv).toContain('admin_action');
    // Who acted, by name as well as id.
    expect(csv).toContain(workspace.admin.name);

    // Dates typed with the keyboard (month, day, year digit by digit) are taken whole, never year 0002.
    const asked: string[] = [];
    page.on('request', (r) => {
      const from = new URL(r.url()).searchParams.get('from');
      if (r.url().includes('/api/v1/audit') && from) asked.push(from);
    });
    await page.getByTestId('audit-from').focus();
    await page.keyboard.type('11262026');
    await expect.poll(() => new URL(page.url()).searchParams.get('from')).toBe('2026-11-26');
    expect(await page.getByTestId('audit-from').inputValue()).toBe('2026-11-26');
    expect(asked.filter((f) => f < '2000')).toEqual([]);
    // A range that ends before it starts is said beside the dates, not sent to the server.
    await page.goto('/admin/audit?from=2026-11-27&to=2026-11-25');
    expect(await page.getByTestId('audit-range-error').textContent()).toBe('From must be on or before To.');
    expect(await page.getByText('The request querystring is invalid').count()).toBe(0);
    // Nothing to export either: the file would be the refusal.
    expect(await page.getByTestId('audit-csv').getAttribute('href')).toBeNull();
    expect(await page.getByTestId('audit-csv').isDisabled()).toBe(true);
    // A link the server refuses (From "yesterday", which the field cannot show): no Try again that can never work,
    // but what was refused and a way to clear it; no export meanwhile.
    await page.goto('/admin/audit?from=yesterday');
    const refused = page.getByTestId('audit-filter-refused');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('From “yesterday”');
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    expect(await page.getByTestId('audit-csv').getAttribute('href')).toBeNull();
    await refused.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByTestId('audit-table').waitFor();
    expect(new URL(page.url()).search).toBe('');
    expect(await page.getByTestId('audit-csv').getAttribute('href')).toContain('/api/v1/audit');
  });

  it('changes the password (wrong and weak refused in plain words) and resets a forgotten one by e-mail', async () => {
    const email = `pw-${uniqueSuffix()}@example.test`;
    const first = `Quiet-meadow-${uniqueSuffix()}-river`;
    await harness.addMember(workspace.id, { email, name: 'Pat Password', role: 'member', password: first });
    const page = await harness.newPage();
    await signIn(page, email, first);
    await page.goto('/account');
    await page.getByLabel('Current password').fill('not-my-password');
    await page.getByLabel('New password').first().fill('password1234');
    await page.getByLabel('New password again').fill('password1234');
    await page.getByTestId('change-password').click();
    await expect
      .poll(async () =>
        (await page.getByTestId('field-error-currentPassword').count()) > 0
          ? page.getByTestId('field-error-currentPassword').textContent()
          : page.getByTestId('field-error-newPassword').textContent(),
      )
      .toMatch(/not your current password|stronger password/);
    const second = `Amber-canyon-${uniqueSuffix()}-falcon`;
    await page.getByLabel('Current password').fill(first);
    await page.getByLabel('New password').first().fill(second);
    await page.getByLabel('New password again').fill(second);
    await page.getByTestId('change-password').click();
    await page.getByText('Password changed.').first().waitFor();

    // Forgot password: the same answer for any address; the e-mailed link sets a new one.
    const signedOut = await harness.newPage();
    await signedOut.goto('/');
    await signedOut.getByTestId('forgot-password').click();
    await signedOut.getByTestId('forgot-dialog').getByLabel('E-mail').fill(email);
    await signedOut.getByTestId('send-reset').click();
    await signedOut.getByTestId('reset-requested').waitFor();
    const answer = await signedOut.getByTestId('reset-requested').textContent();
    const stranger = await harness.newPage();
    await stranger.goto('/');
    await stranger.getByTestId('forgot-password').click();
    const nobody = `nobody-${uniqueSuffix()}@example.test`;
    await stranger.getByTestId('forgot-dialog').getByLabel('E-mail').fill(nobody);
    await stranger.getByTestId('send-reset').click();
    await stranger.getByTestId('reset-requested').waitFor();
    const strangerAnswer = await stranger.getByTestId('reset-requested').textContent();
    expect(strangerAnswer?.replace(nobody, '…')).toBe(answer?.replace(email, '…'));
    const mail = await mailTo(email);
    expect(mail.text).toContain('Hello Pat Password');
    // No internal id in the words; the link's token is random and may look like one by chance.
    expect(mail.text.replace(/https?:\/\/\S+/g, '')).not.toMatch(/\b(usr|ws|rst)_[a-z0-9]{6,}/);
    await signedOut.goto(linkIn(mail.text, '/reset-password'));
    const third = `Cobalt-orchard-${uniqueSuffix()}-meadow`;
    await signedOut.getByLabel('New password').first().fill(third);
    await signedOut.getByLabel('New password again').fill(third);
    await signedOut.getByRole('button', { name: 'Set new password' }).click();
    await signedOut.getByTestId('reset-done').waitFor();
    const fresh = await harness.newPage();
    await signIn(fresh, email, third);
  });

  it('renames the workspace from Settings; the header follows', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/settings');
    await page.getByLabel('Workspace name').fill(`Renamed ${uniqueSuffix()}`);
    const name = await page.getByLabel('Workspace name').inputValue();
    await page.getByTestId('save-settings').click();
    await page.getByText(`The workspace is now called ${name}.`).first().waitFor();
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(name);
  });

  it("sets the clinic's time zone from Settings by typing a city; clears it again", async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/settings');
    const panel = page.getByTestId('time-zone-panel');
    await panel.getByText('Not set').waitFor();
    await panel.getByLabel('Clinic time zone').fill('Los Ang');
    await page.getByRole('option', { name: 'America/Los Angeles' }).click();
    await panel.getByTestId('save-time-zone').click();
    await page
      .getByText(/Times are now shown in Los Angeles/)
      .first()
      .waitFor();
    const me = () =>
      page.evaluate(() => fetch('/api/v1/me').then((r) => r.json() as Promise<{ workspace: { timeZone: string } }>));
    expect((await me()).workspace.timeZone).toBe('America/Los_Angeles');
    await expect.poll(() => panel.textContent()).toContain('Everyone sees times in Los Angeles');

    // Zones under their current names (ICU lists Kolkata as Calcutta), and UTC.
    for (const [typed, option] of [
      ['Kolkata', 'Asia/Kolkata'],
      ['Kyiv', 'Europe/Kyiv'],
      ['UTC', 'UTC'],
    ]) {
      await panel.getByLabel('Clinic time zone').fill(typed);
      await page.getByRole('option', { name: option, exact: true }).waitFor();
    }
    // Typed but not picked from the list: nothing to save.
    await panel.getByLabel('Clinic time zone').fill('Atlantis');
    await page.getByText('No time zone matches').waitFor();
    expect(await panel.getByTestId('save-time-zone').isDisabled()).toBe(true);

    await panel.getByTestId('clear-time-zone').click();
    await page.getByText("Times are now shown in each device's own time zone.").first().waitFor();
    expect((await me()).workspace.timeZone).toBeNull();
  });

  it("another open page learns of the clinic's new time zone without a reload", async () => {
    const page = await harness.newPage();
    await page.clock.install();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/calendar');
    await page.getByTestId('calendar-zone').waitFor();
    const before = await page.getByTestId('calendar-zone').textContent();
    // Someone else (another tab, another admin) sets the zone.
    const other = await harness.newPage();
    await signIn(other, workspace.admin.email, workspace.admin.password);
    const saved = await other.evaluate(() =>
      fetch('/api/v1/workspace', {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ timeZone: 'Pacific/Auckland' }),
      }).then((r) => r.status),
    );
    expect(saved).toBe(200);
    await page.clock.fastForward('05:01');
    await expect.poll(() => page.getByTestId('calendar-zone').textContent()).toContain('Auckland');
    expect(before).not.toContain('Auckland');
    await other.evaluate(() =>
      fetch('/api/v1/workspace', {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ timeZone: null }),
      }),
    );
  });

  it('names patients in the audit log and filters by a patient picked by name', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const family = `Audit${uniqueSuffix().replace(/[^a-z]/gi, '')}`;
    await page.evaluate(async (familyName) => {
      const post = (url: string, body: unknown) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: JSON.stringify(body),
        }).then((r) => r.json());
      for (const givenName of ['Ada', 'Grace']) {
        const patient = await post('/api/v1/patients', { givenName, familyName });
        await post(`/api/v1/patients/${patient.id}/break-glass`, { reason: 'Unconscious in the waiting room' });
      }
    }, family);
    await page.goto('/admin/audit?kind=break_glass');
    await page.getByTestId('audit-table').waitFor();
    await expect
      .poll(() => page.getByTestId('audit-patient').allTextContents())
      .toEqual(expect.arrayContaining([`Ada ${family}`, `Grace ${family}`]));

    await page.getByRole('combobox', { name: 'Patient' }).fill(`${family}`);
    await page.getByTestId('audit-patient-option').filter({ hasText: 'Grace' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('patientId')).toMatch(/./);
    await expect.poll(() => page.getByTestId('audit-patient').allTextContents()).toEqual([`Grace ${family}`]);

    // The filtered URL opened afresh shows the patient's name in the field.
    await page.reload();
    await expect.poll(() => page.getByRole('combobox', { name: 'Patient' }).inputValue()).toBe(`Grace ${family}`);
  });

  it("filters by the viewer's own days and describes rows in plain words (Auckland)", async () => {
    const context = await harness.browser.newContext({
      baseURL: harness.baseUrl,
      locale: 'en-US',
      timezoneId: 'Pacific/Auckland',
    });
    try {
      const page = await context.newPage();
      await signIn(page, workspace.admin.email, workspace.admin.password);
      // A channel connected and a skill asked for that is not installed: two rows stored with internal codes.
      await page.evaluate(async () => {
        const post = (url: string, body: unknown) =>
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
            body: JSON.stringify(body),
          });
        await post('/api/v1/channels', {
          channel: 'telegram',
          name: 'Front desk bot',
          credentials: { botToken: `${Date.now() % 1e9}:AAauditWordsBotToken`, secretToken: 'audit-words-secret-1' },
        });
        await post('/api/v1/skills/invoke', { slug: 'insurance-eligibility', tool: 'check_eligibility', input: {} });
      });

      // A picked day is the viewer's day: From and To become the instants it starts and the next one starts.
      const sent: URL[] = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.pathname === '/api/v1/audit') sent.push(url);
      });
      await page.goto('/admin/audit?from=2026-11-27&to=2026-11-27');
      await expect.poll(() => sent.length).toBeGreaterThan(0);
      expect(sent[0].searchParams.get('from')).toBe('2026-11-26T11:00:00.000Z');
      expect(sent[0].searchParams.get('to')).toBe('2026-11-27T11:00:00.000Z');
      const csv = new URL((await page.getByTestId('audit-csv').getAttribute('href')) as string, harness.baseUrl);
      expect(csv.searchParams.get('from')).toBe('2026-11-26T11:00:00.000Z');
      expect(csv.searchParams.get('to')).toBe('2026-11-27T11:00:00.000Z');
      // The URL keeps the day, as picked.
      expect(await page.getByLabel('From').inputValue()).toBe('2026-11-27');

      // Today in Auckland (whatever UTC's date) holds the rows just written; yesterday there holds none of them.
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Auckland' }).format(new Date());
      await page.goto(`/admin/audit?from=${today}&to=${today}`);
      const table = page.getByTestId('audit-table');
      await expect.poll(() => table.textContent()).toContain('Connected Telegram to the inbox');
      const words = (await table.textContent()) ?? '';
      expect(words).toContain('Insurance eligibility check: check eligibility through the API');
      expect(words).toContain('the skill is not installed');
      for (const raw of ['channel.connected', 'insurance-eligibility', 'check_eligibility', '›', 'not_found']) {
        expect(words).not.toContain(raw);
      }
      const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
      await page.goto(`/admin/audit?from=${yesterday}&to=${yesterday}&kind=admin_action`);
      await page.getByTestId('empty-state').or(table).first().waitFor();
      expect(await page.getByText('Connected Telegram to the inbox').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('loads more of the audit log from the keyboard: the focus stays, how many came is said', {
    timeout: 150_000,
  }, async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    // Over two pages (50 each) of admin actions: every message search writes one.
    await page.evaluate(async () => {
      for (let i = 0; i < 11; i++) {
        await Promise.all(
          Array.from({ length: 10 }, () =>
            fetch('/api/v1/direct-messages/search?q=loadmore', { headers: { 'x-requested-with': 'fetch' } }),
          ),
        );
      }
    });
    await page.goto('/admin/audit?kind=admin_action');
    const rows = page.getByTestId('audit-row');
    await expect.poll(() => rows.count()).toBe(50);
    const more = page.getByTestId('load-more');
    await more.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(100);
    // The button was pending, never disabled, so the focus is still on it; the count was said politely.
    expect(await more.evaluate((el) => el === document.activeElement)).toBe(true);
    const status = page.getByTestId('load-more-status');
    expect(await status.getAttribute('role')).toBe('status');
    expect(await status.textContent()).toBe('50 more entries loaded, 100 in all.');
    // On to the last page: the button goes, and the focus moves to the words saying what came, in its place.
    for (let i = 0; i < 5 && (await more.count()) > 0; i++) {
      await page.keyboard.press('Enter');
      await expect
        .poll(async () => (await more.count()) === 0 || (await more.getAttribute('data-pending')) === null)
        .toBe(true);
    }
    const end = page.getByTestId('load-more-end');
    await expect.poll(() => end.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await end.textContent()).toMatch(
      new RegExp(`^\\d+ more entr(y|ies) loaded: all ${await rows.count()} are shown\\.$`),
    );
  });

  it('says before removing a provider that their connected calendar goes with them, and again once done', async () => {
    // Dr. Lee connects a Google calendar of hers, through the emulator's consent redirect and our callback.
    const suffix = uniqueSuffix();
    const accountEmail = `dr.lee-${suffix}@riverside.example`;
    const lee = (await harness.addMember(workspace.id, {
      email: `lee-${suffix}@example.test`,
      name: 'Dr. Morgan Lee',
      role: 'member',
      isProvider: true,
    })) as { userId: string; token: string };
    const asLee = { authorization: `Bearer ${lee.token}`, 'content-type': 'application/json' };
    const start = await fetch(`${harness.baseUrl}/api/v1/calendar/connections`, {
      method: 'POST',
      headers: asLee,
      body: JSON.stringify({ provider: 'google' }),
    });
    expect(start.status).toBe(201);
    const authorize = new URL(((await start.json()) as { authorizeUrl: string }).authorizeUrl);
    authorize.searchParams.set('login_hint', accountEmail);
    const consent = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location') ?? '');
    const back = await fetch(`${harness.baseUrl}${callback.pathname}${callback.search}`, { redirect: 'manual' });
    expect(back.status).toBe(302);
    const connections = async () => {
      const response = await fetch(`${harness.baseUrl}/api/v1/calendar/connections`, { headers: asLee });
      expect(response.status).toBe(200);
      return ((await response.json()) as { items: { accountEmail: string }[] }).items;
    };
    expect((await connections()).map((c) => c.accountEmail)).toEqual([accountEmail]);

    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/admin/members');
    const row = page.getByTestId('member-row').filter({ hasText: 'Dr. Morgan Lee' });
    await row.getByTestId('member-remove').click();
    const question = page.getByRole('alertdialog');
    expect(await question.getByRole('heading').textContent()).toBe('Remove Dr. Morgan Lee?');
    // The dialog's description (under its title) names the account and what its leaving means.
    await expect
      .poll(() => question.locator('.dialog-description').textContent())
      .toBe(
        'Their sessions, API tokens and open streams in this workspace stop working at once. Their connected ' +
          `calendar ${accountEmail} (Google) will be disconnected: its appointments leave the clinic calendar ` +
          'until someone connects that account again.',
      );
    await page.getByTestId('confirm-remove').click();
    await page
      .getByText('Dr. Morgan Lee was removed from the workspace; 1 calendar account disconnected.')
      .first()
      .waitFor();
    await expect.poll(() => row.count()).toBe(0);
    // The account is gone from the workspace's connections and calendars (read as the admin).
    const asAdmin = await page.evaluate(async () => {
      const read = async (path: string) =>
        ((await (await fetch(path)).json()) as { items: { accountEmail: string }[] }).items;
      return {
        connections: (await read('/api/v1/calendar/connections')).map((c) => c.accountEmail),
        calendars: (await read('/api/v1/calendar/calendars')).map((c) => c.accountEmail),
      };
    });
    expect(asAdmin.connections).not.toContain(accountEmail);
    expect(asAdmin.calendars).not.toContain(accountEmail);

    // A member without a calendar is asked as before (nothing about calendars).
    await harness.addMember(workspace.id, { email: `kai-${suffix}@example.test`, name: 'Kai Front', role: 'member' });
    await page.reload();
    const kai = page.getByTestId('member-row').filter({ hasText: 'Kai Front' });
    await kai.getByTestId('member-remove').click();
    expect(await question.locator('.dialog-description').textContent()).toBe(
      'Their sessions, API tokens and open streams in this workspace stop working at once.',
    );
    await page.getByTestId('confirm-remove').click();
    await page.getByText('Kai Front was removed from the workspace.').first().waitFor();
  });

  it('tells a member who opens an admin page that it is for admins', async () => {
    const email = `member-${uniqueSuffix()}@example.test`;
    const password = `Silver-lagoon-${uniqueSuffix()}-orbit`;
    await harness.addMember(workspace.id, { email, name: 'Mo Member', role: 'member', password });
    const page = await harness.newPage();
    await signIn(page, email, password);
    for (const path of ['/admin/members', '/admin/audit', '/admin/tokens', '/admin/settings']) {
      await page.goto(path);
      await page.getByTestId('admin-only').waitFor();
      expect(await page.getByTestId('members-table').count()).toBe(0);
    }
    await page.goto('/account');
    await page.getByTestId('password-form').waitFor();
  });
});
