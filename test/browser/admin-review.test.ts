/**
 * The admin area's review findings: a workspace switch under the settings form, token revokes that fail, leaving a
 * workspace yourself, cancelling and repeating an invitation, plain length errors, telling tokens apart, the
 * provider switch's and checkboxes' contrast and the invite dialog's first focus.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

/** WCAG contrast ratio of two computed CSS colours (`rgb(…)`/`rgba(…)`, alpha ignored). */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r = 0, g = 0, bl = 0] = (color.match(/[\d.]+/g) ?? []).map(Number);
    const lin = (v: number) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(bl);
  };
  const [hi = 0, lo = 0] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** An element's computed background and border colours, and the background it sits on (its nearest ancestor's). */
async function coloursOf(locator: Locator) {
  const { background, border, ancestors } = await locator.evaluate((element) => {
    const ancestors: string[] = [];
    for (let up = element.parentElement; up; up = up.parentElement)
      ancestors.push(getComputedStyle(up).backgroundColor);
    const style = getComputedStyle(element);
    return { background: style.backgroundColor, border: style.borderTopColor, ancestors };
  });
  const transparent = (color: string) => color === 'transparent' || /^rgba\(.*,\s*0\)$/.test(color);
  return { background, border, behind: ancestors.find((color) => !transparent(color)) ?? 'rgb(255, 255, 255)' };
}

describe('admin area review', () => {
  let harness: BrowserHarness;
  let riverside: TestWorkspace;
  let harbor: TestWorkspace;

  /** The signed-in user's workspaces by id, with their names, as the API has them now. */
  const workspaceNames = (page: Page) =>
    page.evaluate(async () => {
      const me = (await (await fetch('/api/v1/me')).json()) as { workspaces: { id: string; name: string }[] };
      return Object.fromEntries(me.workspaces.map((w) => [w.id, w.name]));
    });

  const switchTo = async (page: Page, workspace: TestWorkspace) => {
    await page.getByLabel('Switch workspace').selectOption(workspace.id);
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(workspace.name);
  };

  beforeAll(async () => {
    harness = await startHarness();
    riverside = await harness.createWorkspace({ name: `Riverside ${uniqueSuffix()}`, tier: 'standard' });
    harbor = await harness.createWorkspace({ name: `Harbor ${uniqueSuffix()}`, tier: 'standard' });
    // Riverside's admin is an admin of Harbor too.
    await harness.addMember(harbor.id, { email: riverside.admin.email, name: riverside.admin.name, role: 'admin' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('settings show the current workspace after a switch, and a save never renames another one', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    await page.goto('/admin/settings');
    const field = page.getByLabel('Workspace name');
    await expect.poll(() => field.inputValue()).toBe(riverside.name);

    // Switched here: the form shows Harbor's name, and saving renames Harbor with what was typed for it.
    await switchTo(page, harbor);
    await expect.poll(() => field.inputValue()).toBe(harbor.name);
    const renamed = `${harbor.name} (PT)`;
    await field.fill(renamed);
    await page.getByTestId('save-settings').click();
    await page.getByText(`The workspace is now called ${renamed}.`).first().waitFor();
    expect(await workspaceNames(page)).toMatchObject({ [riverside.id]: riverside.name, [harbor.id]: renamed });
    harbor.name = renamed;

    // Switched in another tab (the same session): this tab's save renames nothing and says why (the app's one
    // notice for it); reloaded, the page shows the workspace the session is in now.
    const other = await page.context().newPage();
    await other.goto('/patients');
    await switchTo(other, riverside);
    await field.fill('Typed for Harbor');
    await page.getByTestId('save-settings').click();
    await expect
      .poll(() => page.getByTestId('workspace-changed').textContent())
      .toContain(`This tab was showing ${harbor.name}; you have since switched to ${riverside.name} in another tab.`);
    expect(await workspaceNames(page)).toMatchObject({ [riverside.id]: riverside.name, [harbor.id]: harbor.name });
    await page.getByTestId('workspace-changed-reload').click();
    await expect.poll(() => field.inputValue()).toBe(riverside.name);
    await other.close();
  });

  it('a token revoke that fails says why in the dialog; one revoked elsewhere meanwhile is said to be gone', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    const createToken = (name: string) =>
      page.evaluate(async (tokenName) => {
        const res = await fetch('/api/v1/auth/tokens', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: JSON.stringify({ name: tokenName }),
        });
        return ((await res.json()) as { id: string }).id;
      }, name);
    const revokeBehindTheBack = (id: string) =>
      page.evaluate(async (tokenId) => {
        await fetch(`/api/v1/auth/tokens/${tokenId}`, { method: 'DELETE', headers: { 'x-requested-with': 'fetch' } });
      }, id);

    for (const where of ['/admin/tokens', '/account'] as const) {
      const name = `Revoke test ${uniqueSuffix()}`;
      const id = await createToken(name);
      await page.goto(where);
      const row = page.getByTestId(where === '/account' ? 'token-item' : 'admin-token-row').filter({ hasText: name });
      await row.waitFor();
      const question = page.getByRole('alertdialog');

      // The server fails: the dialog stays open and says so.
      await page.route('**/api/v1/*/tokens/*', (route) =>
        route.request().method() === 'DELETE'
          ? route.fulfill({
              status: 503,
              contentType: 'application/problem+json',
              body: JSON.stringify({ status: 503, code: 'unavailable', detail: 'The database is not answering' }),
            })
          : route.continue(),
      );
      await row.getByTestId('revoke-token').click();
      await page.getByTestId('confirm-revoke').click();
      await expect.poll(() => question.getByTestId('confirm-error').textContent()).toContain('not answering');
      expect(await question.isVisible()).toBe(true);
      await page.unroute('**/api/v1/*/tokens/*');
      await question.getByRole('button', { name: 'Cancel' }).click();
      await question.waitFor({ state: 'detached' });

      // Revoked elsewhere meanwhile (404): said in the dialog, the list is read again (the row goes), and once
      // closed the focus is on the list's title, not lost to the page.
      await revokeBehindTheBack(id);
      await row.getByTestId('revoke-token').click();
      await page.getByTestId('confirm-revoke').click();
      await expect.poll(() => question.getByTestId('confirm-error').textContent()).toContain('revoked meanwhile');
      await expect.poll(() => row.count()).toBe(0);
      expect(await page.getByTestId('confirm-revoke').count()).toBe(0);
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Close');
      await page.keyboard.press('Enter');
      await question.waitFor({ state: 'detached' });
      await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toMatch(/^H[12]$/);
    }
  });

  it('removing yourself is leaving: asked in your own words, and you move on to a workspace you still have', async () => {
    const lakeside = await harness.createWorkspace({ name: `Lakeside ${uniqueSuffix()}`, tier: 'standard' });
    // Lakeside's admin is a member of Harbor as well; two more admins stay, one of whom then leaves too.
    await harness.addMember(harbor.id, { email: lakeside.admin.email, name: lakeside.admin.name, role: 'member' });
    const sole = { email: `sole-${uniqueSuffix()}@example.test`, password: `Quiet-harbor-${uniqueSuffix()}-lamp` };
    await harness.addMember(lakeside.id, { ...sole, name: 'Sam Sole', role: 'admin' });
    await harness.addMember(lakeside.id, {
      email: `stay-${uniqueSuffix()}@example.test`,
      name: 'Kim Stay',
      role: 'admin',
    });

    const page = await harness.newPage();
    await signIn(page, lakeside.admin.email, lakeside.admin.password);
    await switchTo(page, lakeside);
    await page.goto('/admin/members');
    await page.getByTestId('member-row').filter({ hasText: '(you)' }).getByTestId('member-remove').click();
    const question = page.getByRole('alertdialog');
    expect(await question.getByRole('heading').textContent()).toBe(`Leave ${lakeside.name}?`);
    const said = (await question.locator('.dialog-description').textContent()) ?? '';
    expect(said).toContain('You lose access to it at once.');
    expect(said).toContain(`You move on to ${harbor.name}.`);
    expect(said).not.toMatch(/\bTheir\b/);
    await question.getByTestId('confirm-remove').click();
    // Still signed in, now in Harbor (where this user is no admin: off the admin page), and told so.
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(harbor.name);
    await page.getByText(`You left ${lakeside.name}.`).first().waitFor();
    expect(new URL(page.url()).pathname).toBe('/patients');
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);

    // With no other workspace, leaving signs you out, and says so.
    const last = await harness.newPage();
    await signIn(last, sole.email, sole.password);
    await last.goto('/admin/members');
    await last.getByTestId('member-row').filter({ hasText: '(you)' }).getByTestId('member-remove').click();
    expect(await last.getByRole('alertdialog').locator('.dialog-description').textContent()).toContain(
      'You belong to no other workspace, so you will be signed out.',
    );
    await last.getByTestId('confirm-remove').click();
    await last.getByRole('button', { name: 'Sign in' }).waitFor();
    await last.getByText(`You left ${lakeside.name}.`).first().waitFor();
  });

  it('removing someone invited cancels their invitation, in those words', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    await page.goto('/admin/members');
    const email = `cancel-${uniqueSuffix()}@example.test`;
    await page.getByTestId('invite-member').click();
    const dialog = page.getByTestId('invite-dialog');
    await dialog.getByLabel('E-mail').fill(email);
    await dialog.getByLabel('Name').fill('Ines Invited');
    await dialog.getByTestId('send-invitation').click();
    const row = page.getByTestId('member-row').filter({ hasText: 'Ines Invited' });
    await expect.poll(() => row.textContent()).toContain('Invited');

    await row.getByTestId('member-remove').click();
    const question = page.getByRole('alertdialog');
    expect(await question.getByRole('heading').textContent()).toBe('Cancel the invitation for Ines Invited?');
    expect(await question.locator('.dialog-description').textContent()).toContain(
      'The link in their e-mail stops working.',
    );
    // Not "Cancel" beside "Cancel invitation": the safe choice says what it keeps.
    await question.getByRole('button', { name: 'Keep invitation' }).click();
    await question.waitFor({ state: 'detached' });
    await row.getByTestId('member-remove').click();
    await question.getByRole('button', { name: 'Cancel invitation' }).click();
    await page.getByText('The invitation for Ines Invited was cancelled.').first().waitFor();
    await expect.poll(() => row.count()).toBe(0);
  });

  it('inviting again says the earlier link stopped working, and that link says so at once', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    await page.goto('/admin/members');
    const email = `again-${uniqueSuffix()}@example.test`;
    const invite = async () => {
      await page.getByTestId('invite-member').click();
      const dialog = page.getByTestId('invite-dialog');
      await dialog.getByLabel('E-mail').fill(email);
      await dialog.getByLabel('Name').fill('Rene Again');
      await dialog.getByTestId('send-invitation').click();
      await dialog.waitFor({ state: 'detached' });
    };
    /** The invitation links mailed to the address (the mailbox lists in no set order). */
    const links = async (count: number) => {
      for (let i = 0; i < 50; i++) {
        const response = await fetch(`${harness.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(email)}`);
        const found = ((await response.json()) as { items: { text: string }[] }).items
          .map((m) => /https?:\/\/\S+(\/accept-invitation\?token=\S+)/.exec(m.text)?.[1])
          .filter((link): link is string => !!link);
        if (found.length >= count) return found;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`fewer than ${count} invitations to ${email}`);
    };

    await invite();
    await page.getByText('Invitation sent').first().waitFor();
    const [first] = await links(1);
    await invite();
    await page.getByText('Invitation sent again').first().waitFor();
    expect(await page.getByText(`The link in the earlier e-mail to ${email} no longer works`).count()).toBeGreaterThan(
      0,
    );
    const second = (await links(2)).find((link) => link !== first) as string;

    // The replaced link says it no longer works, and what to do, before any password is asked for.
    const invitee = await harness.newPage();
    await invitee.goto(first);
    const ended = invitee.getByTestId('invitation-ended');
    await expect.poll(() => ended.textContent()).toContain('no longer works');
    expect(await ended.textContent()).toContain('latest invitation e-mail');
    expect(await invitee.locator('input[type="password"]').count()).toBe(0);
    // The new one asks for the password.
    await invitee.goto(second);
    await invitee.getByTestId('accept-invitation-form').waitFor();
    expect(await invitee.getByTestId('invitation-ended').count()).toBe(0);
  });

  it('says a text over its limit in plain words, and keeps what was typed or pasted whole', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    const tooLong = async (field: ReturnType<Page['getByLabel']>, length: number, submit: () => Promise<void>) => {
      await field.fill('x'.repeat(length));
      // No maxlength: the browser would cut a paste short without a word.
      expect(await field.inputValue()).toHaveLength(length);
      await submit();
    };

    await page.goto('/account');
    await tooLong(page.getByLabel('New token name'), 150, () => page.getByTestId('create-token').click());
    await expect
      .poll(() => page.getByTestId('field-error-name').textContent())
      .toBe('Keep it to 100 characters or fewer.');

    await page.goto('/admin/settings');
    await tooLong(page.getByLabel('Workspace name'), 220, () => page.getByTestId('save-settings').click());
    await expect
      .poll(() => page.getByTestId('field-error-name').textContent())
      .toBe('Keep it to 200 characters or fewer.');

    await page.goto('/admin/members');
    await page.getByTestId('invite-member').click();
    const dialog = page.getByTestId('invite-dialog');
    await dialog.getByLabel('E-mail').fill('someone@example.test');
    await tooLong(dialog.getByLabel('Name'), 250, () => dialog.getByTestId('send-invitation').click());
    await expect
      .poll(() => dialog.getByTestId('field-error-name').textContent())
      .toBe('Keep it to 200 characters or fewer.');
    expect(await page.getByText(/expected string|Too big/).count()).toBe(0);
  });

  it('tells apart two tokens of one name on the account page, as the admin page does', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    const name = `Twin ${uniqueSuffix()}`;
    const made = await page.evaluate(async (tokenName) => {
      const create = async () =>
        (await (
          await fetch('/api/v1/auth/tokens', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
            body: JSON.stringify({ name: tokenName }),
          })
        ).json()) as { id: string; token: string };
      return [await create(), await create()];
    }, name);
    // A script uses the first.
    const used = await fetch(`${harness.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${made[0].token}` } });
    expect(used.status).toBe(200);

    await page.goto('/account');
    const items = page.getByTestId('token-item').filter({ hasText: name });
    await expect.poll(() => items.count()).toBe(2);
    const texts = await items.allTextContents();
    expect(new Set(texts).size).toBe(2);
    const first = texts.find((text) => text.includes(`…${made[0].id.slice(-6)}`));
    const second = texts.find((text) => text.includes(`…${made[1].id.slice(-6)}`));
    expect(first).toMatch(/Last used/);
    expect(second).toContain('Never used');
    // On a phone the id's end stays whole (it broke after its "…", which read as a cut-off line).
    await page.setViewportSize({ width: 390, height: 844 });
    const suffix = items.first().getByText(/^…\w{6}$/);
    await expect.poll(() => suffix.evaluate((el) => el.getClientRects().length)).toBe(1);
  });

  it("draws the provider switch's off track at 3:1 or more against the page and its thumb, light and dark", async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    await harness.addMember(riverside.id, {
      email: `off-${uniqueSuffix()}@example.test`,
      name: 'Otto Off',
      role: 'member',
    });
    await page.goto('/admin/members');
    const row = page.getByTestId('member-row').filter({ hasText: 'Otto Off' });
    await expect.poll(() => row.getByTestId('member-provider').locator('input').isChecked()).toBe(false);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(0, 0); // no row hovered
      const track = await coloursOf(row.locator('.switch-track'));
      const thumb = await coloursOf(row.locator('.switch-thumb'));
      const ratios = {
        page: contrast(track.background, track.behind),
        thumb: contrast(track.background, thumb.background),
      };
      expect(ratios.page, `${scheme}: track against its background`).toBeGreaterThanOrEqual(3);
      expect(ratios.thumb, `${scheme}: track against its thumb`).toBeGreaterThanOrEqual(3);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it("draws an unticked checkbox's border at 3:1 or more against what it sits on, light and dark", async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    await page.goto('/admin/members');
    await page.getByTestId('invite-member').click();
    // The invite dialog's Admin and Provider choices start unticked.
    const box = page.getByTestId('invite-dialog').locator('.ui-checkbox:not([data-selected]) .checkbox-box').first();
    await box.waitFor();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const colours = await coloursOf(box);
      expect(contrast(colours.border, colours.behind), `${scheme}: border against the page`).toBeGreaterThanOrEqual(3);
      expect(contrast(colours.border, colours.background), `${scheme}: border against the box`).toBeGreaterThanOrEqual(
        3,
      );
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('opens the invite dialog with the focus on its E-mail field', async () => {
    const page = await harness.newPage();
    await signIn(page, riverside.admin.email, riverside.admin.password);
    await switchTo(page, riverside);
    await page.goto('/admin/members');
    await page.getByTestId('members-table').waitFor();
    const dialog = page.getByTestId('invite-dialog');
    // From the keyboard and by pointer alike.
    await page.getByTestId('invite-member').focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await expect.poll(() => dialog.getByLabel('E-mail').evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type('typed@example.test');
    expect(await dialog.getByLabel('E-mail').inputValue()).toBe('typed@example.test');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('invite-member').click();
    await expect.poll(() => dialog.getByLabel('E-mail').evaluate((el) => el === document.activeElement)).toBe(true);
  });
});
