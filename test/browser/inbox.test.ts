// The Inbox as the front desk uses it: a patient's Telegram message arrives live, opening it clears
// the unread count, a reply goes out through the provider and shows its status, linking the contact
// puts the thread on the patient's record; admins connect channels from the page. Outside the Inbox
// a new message shows on the navigation (and the phone's menu button), the tab title and a toast; a
// refused reply says so in plain words with Retry.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeProblems,
  type BrowserHarness,
  signIn,
  startHarness,
  type TestWorkspace,
  unlessAlreadyHandled,
} from './harness.js';

describe('Inbox page', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  const botToken = `${Date.now() % 1e9}:AAbrowserInboxBot01`;

  const simulate = (text: string, chatId = 777001, firstName = 'Grace', lastName = 'Hopper') =>
    page.evaluate(
      async ({ botToken, text, chatId, firstName, lastName }) =>
        (
          await fetch('/_emulators/telegram/simulate', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ botToken, chatId, firstName, lastName, text }),
          })
        ).json(),
      { botToken, text, chatId, firstName, lastName },
    );

  /** Opens a page and waits until the shell's inbox stream is open (so a message now arrives live). */
  const openWithStream = async (path: string) => {
    const stream = page.waitForResponse((r) => r.url().includes('/api/v1/channels/events'));
    await page.goto(path);
    await stream;
  };

  const axeProblemsIn = (selector: string) => axeProblems(page, selector);

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
    page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('with no channel connected the Inbox says so and offers to connect one, with no filter per channel', async () => {
    await page.goto('/inbox');
    await page.getByText('No channel connected yet').waitFor();
    expect(await page.locator('.inbox-filters .filter-chip').allTextContents()).toEqual(['All']);
    // Nothing to choose: no "pick one on the left" beside an empty list.
    expect(await page.getByText('Choose a conversation').count()).toBe(0);
    await page.getByTestId('connect-first-channel').click();
    await page.getByTestId('channels-dialog').waitFor();
    await page.keyboard.press('Escape');
  });

  it("an admin connects Telegram from the page; a bad field gets the server's words beside it", async () => {
    await page.goto('/inbox');
    await page.getByTestId('manage-channels').click();
    const dialog = page.getByTestId('channels-dialog');
    // Instagram with a page id that is not a number: the server's own words, next to Page ID.
    await page.getByTestId('connect-channel').selectOption('instagram');
    await dialog.getByLabel('App secret').fill('instagram-app-secret-1');
    await dialog.getByLabel('Verify token').fill('instagram-verify-token-1');
    await dialog.getByLabel('Page access token').fill('instagram-access-token-1');
    await dialog.getByLabel('Page ID').fill('my-clinic-page');
    await page.getByTestId('connect-submit').click();
    const pageIdError = dialog.getByTestId('field-error-credentials.pageId');
    await pageIdError.waitFor();
    expect(await pageIdError.textContent()).toBe('The page id is the number Meta shows, digits only');
    expect(await dialog.getByLabel('Page ID').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByText(/These are not/).count()).toBe(0);
    expect(await page.getByTestId('connect-error').count()).toBe(0);
    expect(await axeProblemsIn('[data-testid="connect-channel-form"]')).toEqual([]);

    await page.getByTestId('connect-channel').selectOption('telegram');
    // Too short: said in words, not in the validator's own ("Too small: expected string to have >=16 …").
    await dialog.getByLabel('Bot token').fill(botToken);
    await dialog.getByLabel('Secret token').fill('short-secret');
    await page.getByTestId('connect-submit').click();
    const secretError = dialog.getByTestId('field-error-credentials.secretToken');
    await secretError.waitFor();
    expect(await secretError.textContent()).toBe('Use at least 16 characters.');
    await dialog.getByLabel('Bot token').fill('not a token');
    await dialog.getByLabel('Secret token').fill('browser-secret-token-1');
    await page.getByTestId('connect-submit').click();
    await dialog.getByTestId('field-error-credentials.botToken').getByText('A bot token looks like').waitFor();
    await dialog.getByLabel('Bot token').fill(botToken);
    await page.getByTestId('connect-submit').click();
    await expect.poll(() => page.getByTestId('channel-webhook').count()).toBe(1);
    // Telegram needs nothing pasted (connecting set its webhook): the confirmation does not ask for it.
    await page
      .locator('[data-sonner-toast]')
      .filter({ hasText: 'Patients’ Telegram messages now arrive in the Inbox.' })
      .waitFor();
    expect(await page.getByTestId('channel-webhook').textContent()).toMatch(
      /\/api\/v1\/telegram\/webhook\?connection=chn_/,
    );
    await page.keyboard.press('Escape');
  });

  it("channels say which is which, copy their webhook URL, and Telegram's secret token is made for the admin", async () => {
    await page.goto('/inbox');
    await page.getByTestId('manage-channels').click();
    const dialog = page.getByTestId('channels-dialog');
    await page.getByTestId('connect-channel').selectOption('telegram');
    expect(await dialog.getByLabel('Secret token').inputValue()).toMatch(/^[A-Za-z0-9_-]{32}$/);
    await page.getByTestId('connect-channel').selectOption('whatsapp');

    // Each Disconnect names its channel; so does the question it asks.
    const row = dialog.locator('.channel-connection').first();
    const name = (await row.locator('strong').textContent()) ?? '';
    const disconnect = row.getByTestId('disconnect-channel');
    expect(await disconnect.getAttribute('aria-label')).toBe(`Disconnect ${name} (Telegram)`);
    await disconnect.click();
    await page
      .getByRole('alertdialog')
      .or(page.getByRole('dialog', { name: /^Disconnect/ }))
      .first()
      .waitFor();
    expect(await page.getByText(`Disconnect ${name} (Telegram)?`).count()).toBe(1);
    await page.getByRole('button', { name: 'Cancel' }).click();

    // The webhook URL is one press away from the clipboard.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    const copy = row.getByTestId('copy-channel-webhook');
    expect(await copy.getAttribute('aria-label')).toBe(`Copy webhook URL of ${name}`);
    await copy.click();
    await page
      .locator('[data-sonner-toast]')
      .filter({ hasText: `Webhook URL of ${name} copied.` })
      .waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      await row.getByTestId('channel-webhook').textContent(),
    );
    expect(await axeProblemsIn('[data-testid="channels-dialog"]')).toEqual([]);
    await page.keyboard.press('Escape');
  });

  it('a message arrives live with an unread count; opening it clears the count; a reply shows Sent', async () => {
    await page.goto('/inbox');
    await page.getByTestId('inbox-stream').getByText('Live').waitFor();
    const sent = await simulate('Can I move my appointment to Friday?');
    expect(sent.delivered).toBe(true);
    const item = page.getByTestId('conversation-item').filter({ hasText: 'Grace Hopper' });
    await item.getByTestId('conversation-unread').waitFor();
    expect(await item.getByTestId('channel-badge').textContent()).toBe('Telegram');
    await item.click();
    await page.getByTestId('inbox-message').filter({ hasText: 'Friday' }).waitFor();
    await expect.poll(() => item.getByTestId('conversation-unread').count()).toBe(0);
    await page.getByTestId('inbox-reply').fill('Friday 9:30 works, see you then.');
    // Sent with the button from the keyboard: the focus comes back to the reply box and "Sent." is read out.
    await page.getByTestId('inbox-send').focus();
    await page.keyboard.press('Enter');
    const mine = page.locator('[data-testid="inbox-message"][data-direction="out"]').filter({ hasText: 'Friday 9:30' });
    await mine.getByTestId('message-status').getByText('Sent').waitFor();
    await expect.poll(() => page.getByTestId('inbox-send-status').textContent()).toBe('Sent.');
    expect(await page.getByTestId('inbox-send-status').getAttribute('role')).toBe('status');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('inbox-reply');
    const outbox = await page.evaluate(
      async () => (await (await fetch('/_emulators/telegram/sent?to=777001')).json()).items,
    );
    expect(outbox[0].text).toBe('Friday 9:30 works, see you then.');
  });

  it('a half-written reply waits while another conversation is read, and is not carried into it', async () => {
    await page.goto('/inbox');
    await page.getByTestId('inbox-stream').getByText('Live').waitFor();
    await simulate('Do you take walk-ins?', 777009, 'Tomas', 'Keller');
    const grace = page.getByTestId('conversation-item').filter({ hasText: 'Grace Hopper' });
    const tomas = page.getByTestId('conversation-item').filter({ hasText: 'Tomas Keller' });
    await tomas.waitFor();
    await grace.click();
    await page.getByTestId('inbox-reply').fill('Half-written answer about the lab results');
    await tomas.click();
    await page.getByTestId('inbox-message').filter({ hasText: 'walk-ins' }).waitFor();
    expect(await page.getByTestId('inbox-reply').inputValue()).toBe('');
    await grace.click();
    await page.getByTestId('inbox-message').filter({ hasText: 'Friday' }).first().waitFor();
    await expect
      .poll(() => page.getByTestId('inbox-reply').inputValue())
      .toBe('Half-written answer about the lab results');

    // Sent, then another conversation opened before the answer came: coming back, the box is empty (the words
    // are on their way, not a draft to send a second time).
    const replies = (url: URL) => /\/channels\/conversations\/[^/]+\/messages$/.test(url.pathname);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(replies, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      await held;
      await route.continue().catch(unlessAlreadyHandled);
    });
    await page.getByTestId('inbox-reply').fill('Your lab results are in; call us back.');
    await page.getByTestId('inbox-send').click();
    await tomas.click();
    await page.getByTestId('inbox-message').filter({ hasText: 'walk-ins' }).waitFor();
    await grace.click();
    await page.getByTestId('inbox-message').filter({ hasText: 'Friday' }).first().waitFor();
    expect(await page.getByTestId('inbox-reply').inputValue()).toBe('');
    release();
    await page.getByTestId('inbox-message').filter({ hasText: 'Your lab results are in' }).waitFor();
    await page.unroute(replies);
    await tomas.click();
    await grace.click();
    await page.getByTestId('inbox-message').filter({ hasText: 'Your lab results are in' }).waitFor();
    expect(await page.getByTestId('inbox-reply').inputValue()).toBe('');
  });

  it('a reply the provider refuses says so in plain words, with Retry; the list marks the conversation', async () => {
    const item = page.getByTestId('conversation-item').filter({ hasText: 'Grace Hopper' });
    await page.evaluate(async () => {
      await fetch('/_emulators/telegram/faults', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          operation: 'messages.send',
          status: 500,
          body: { description: 'Internal Server Error' },
        }),
      });
    });
    await page.getByTestId('inbox-reply').fill('Your results are in, call us.');
    await page.keyboard.press('Enter');
    const failed = page
      .locator('[data-testid="inbox-message"][data-direction="out"]')
      .filter({ hasText: 'Your results are in' });
    const failure = failed.getByTestId('message-failure');
    await failure.waitFor();
    expect(await failure.getByTestId('message-status').textContent()).toBe('Not delivered — Telegram refused it.');
    // The provider's words are kept, one click away.
    expect(await failed.getByTestId('message-error').isVisible()).toBe(false);
    await failed.getByText('Details').click();
    expect(await failed.getByTestId('message-error').textContent()).toContain('Internal Server Error');
    // Said where the send was made, and marked in the list.
    expect(await page.getByTestId('inbox-send-status').textContent()).toContain('Not delivered');
    await item.getByTestId('conversation-failed').waitFor();
    expect(await item.getByTestId('conversation-failed').textContent()).toBe('Not delivered');
    expect(await axeProblemsIn('.messages-layout')).toEqual([]);

    // Retry (from the keyboard) sends the same words again as a new message; the failed one stays, without a
    // second Retry, and the focus waits in the reply box, where the outcome is read out.
    await failed.getByRole('button', { name: 'Retry' }).focus();
    await page.keyboard.press('Enter');
    const sentAgain = page
      .locator('[data-testid="inbox-message"][data-direction="out"]')
      .filter({ hasText: 'Your results are in' });
    await expect.poll(() => sentAgain.count()).toBe(2);
    await sentAgain.nth(1).getByTestId('message-status').getByText('Sent').waitFor();
    expect(await sentAgain.nth(0).getByTestId('message-status').textContent()).toContain('Not delivered');
    expect(await sentAgain.nth(0).getByRole('button', { name: 'Retry' }).count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('inbox-reply');
    expect(await page.getByTestId('inbox-send-status').textContent()).toBe('Sent again.');
    await expect.poll(() => item.getByTestId('conversation-failed').count()).toBe(0);
    const outbox = await page.evaluate(
      async () => (await (await fetch('/_emulators/telegram/sent?to=777001')).json()).items as { text: string }[],
    );
    expect(outbox.filter((m) => m.text === 'Your results are in, call us.')).toHaveLength(1);
  });

  it('outside the Inbox a new message shows on the Inbox item, in the tab title and in a polite toast, live', async () => {
    await openWithStream('/patients');
    expect(await page.getByTestId('nav-inbox').getByTestId('unread-badge').count()).toBe(0);
    const sent = await simulate('Is the parking free on Saturdays?', 777002, 'Ada', 'Lovelace');
    expect(sent.delivered).toBe(true);
    const badge = page.getByTestId('nav-inbox').getByTestId('unread-badge');
    await badge.waitFor();
    expect(await badge.textContent()).toBe('1 unread');
    const toast = page.locator('[data-sonner-toast]').filter({ hasText: 'New patient message on Telegram' });
    await toast.waitFor();
    expect(await page.locator('section[aria-live="polite"]').filter({ has: toast }).count()).toBe(1);
    await expect.poll(() => page.title()).toMatch(/^\(1\) Patients · /);
    // The toast opens the conversation; reading it clears the count everywhere.
    await toast.getByRole('button', { name: 'Open' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('inbox-message').filter({ hasText: 'parking' }).waitFor();
    // Opened from the keyboard, the focus lands on the page opened (not on the page's body, as the toast goes).
    await page.waitForTimeout(400);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    await expect.poll(() => badge.count()).toBe(0);
    await expect.poll(() => page.title()).toMatch(/^Inbox · /);
  });

  it('on a phone the menu button carries the unread count', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openWithStream('/patients');
    const menu = page.getByTestId('nav-menu-button');
    expect(await menu.getAttribute('aria-label')).toBe('Menu');
    await simulate('Can I bring my daughter along?', 777003, 'Alan', 'Turing');
    await page.getByRole('button', { name: 'Menu, 1 unread' }).waitFor();
    expect(await page.getByTestId('menu-unread').isVisible()).toBe(true);
    expect(await page.getByTestId('menu-unread').textContent()).toBe('1');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeProblemsIn('.topbar')).toEqual([]);
    await menu.click();
    const drawer = page.getByTestId('nav-menu');
    expect(await drawer.getByTestId('nav-inbox').getByTestId('unread-badge').textContent()).toBe('1 unread');
    await drawer.getByTestId('nav-inbox').click();
    await page.getByTestId('conversation-item').filter({ hasText: 'Alan Turing' }).click();
    await page.getByTestId('inbox-message').filter({ hasText: 'daughter' }).waitFor();
    await expect.poll(() => page.getByTestId('nav-menu-button').getAttribute('aria-label')).toBe('Menu');
    expect(await page.getByTestId('menu-unread').count()).toBe(0);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("links the contact to a patient: the patient's name labels the contact, here and on the record", async () => {
    // The record's name is not the one the patient uses on Telegram.
    const patientId = await page.evaluate(async () => {
      const res = await fetch('/api/v1/patients', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ givenName: 'Grace', familyName: 'Murray Hopper', dateOfBirth: '1906-12-09' }),
      });
      return (await res.json()).id as string;
    });
    await page.goto('/inbox');
    const item = page.getByTestId('conversation-item').filter({ hasText: 'Grace Hopper' });
    await item.click();
    await page.getByTestId('link-patient').click();
    await page.getByTestId('link-patient-picker').getByRole('combobox').fill('Murray Hopper');
    await page.getByTestId('link-patient-option').first().click();
    // A laptop's screen: the reply box reaches the bottom of the window.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByTestId('link-patient-save').click();
    await page.getByTestId('linked-patient').getByText('Grace Murray Hopper').waitFor();
    // The confirmation does not sit on the reply box's Send button (it did, for seconds, at the bottom right).
    const toast = page.locator('[data-sonner-toast]').filter({ hasText: 'Linked to the patient record' });
    await toast.waitFor();
    await expect.poll(async () => (await toast.boundingBox())?.y ?? null).not.toBeNull();
    const [toastBox, sendBox] = [await toast.boundingBox(), await page.getByTestId('inbox-send').boundingBox()];
    const overlaps =
      !!toastBox &&
      !!sendBox &&
      toastBox.x < sendBox.x + sendBox.width &&
      sendBox.x < toastBox.x + toastBox.width &&
      toastBox.y < sendBox.y + sendBox.height &&
      sendBox.y < toastBox.y + toastBox.height;

    expect(overlaps).toBe(false);
    await page.setViewportSize({ width: 1280, height: 900 });
    // Two patients may share a name: the chip says which one by birth date.
    await expect
      .poll(() => page.getByTestId('linked-patient-born').textContent())
      .toBe(
        ` · born ${new Date(Date.UTC(1906, 11, 9)).toLocaleDateString('en-US', { timeZone: 'UTC', dateStyle: 'medium' })}`,
      );
    // A link to the record, not a warning: the primary colour, a full-size target, the space before the birth date.
    const chip = page.getByTestId('linked-patient');
    expect((await chip.boundingBox())?.height ?? 0).toBeGreaterThanOrEqual(24);
    expect(await chip.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(232, 238, 252)');
    expect(await chip.evaluate((el) => (el as HTMLElement).innerText)).toMatch(/^Grace Murray Hopper · born /);
    // The list and the thread header name the patient; the Telegram name is the secondary text.
    await expect.poll(() => item.locator('.thread-item-title').textContent()).toBe('Grace Murray Hopper');
    expect(await item.getByTestId('contact-detail').textContent()).toBe('Grace Hopper');
    expect(await page.getByTestId('conversation-view').getByRole('heading', { level: 2 }).textContent()).toBe(
      'Grace Murray Hopper',
    );
    expect(await page.getByTestId('conversation-view').getByTestId('contact-detail').textContent()).toBe(
      ' Grace Hopper',
    );
    await page.goto(`/patients/${patientId}?tab=messages`);
    const thread = page.getByTestId('patient-conversation');
    await thread.getByText('Friday 9:30 works, see you then.').waitFor();
    expect(await thread.getByRole('heading', { level: 3 }).textContent()).toContain('Grace Murray Hopper');
  });

  it('Link to patient: when nobody matches, Register new patient opens the new-patient form with the typed name and links on save', async () => {
    await simulate('Do you take new patients?', 777005, 'JR', '');
    await page.goto('/inbox');
    await page.getByTestId('conversation-item').filter({ hasText: 'JR' }).click();
    await page.getByTestId('link-patient').click();
    const dialog = page.getByTestId('link-patient-dialog');
    await page.getByTestId('link-patient-picker').getByRole('combobox').fill('Jordan Reyes');
    await page.getByText('No patient matches “Jordan Reyes”.').waitFor();
    // Not a dead end: the action is in view (and clickable) while the picker says nobody matches.
    const register = dialog.getByTestId('register-patient');
    expect(await register.textContent()).toBe('Register new patient');
    await register.click();
    // The app's own new-patient form, prefilled with what was typed.
    await dialog.getByTestId('patient-form').waitFor();
    expect(await dialog.getByRole('heading', { name: 'Register a new patient' }).count()).toBe(1);
    expect(await dialog.getByLabel('Given name').inputValue()).toBe('Jordan');
    expect(await dialog.getByLabel('Family name').inputValue()).toBe('Reyes');
    expect(await axeProblemsIn('[data-testid="link-patient-dialog"]')).toEqual([]);
    await dialog.getByLabel('Date of birth').fill('1990-04-02');
    await dialog.getByTestId('patient-form-submit').click();
    await expect.poll(() => dialog.count()).toBe(0);
    await page.getByTestId('linked-patient').getByText('Jordan Reyes').waitFor();
    const item = page.getByTestId('conversation-item').filter({ hasText: 'Jordan Reyes' });
    expect(await item.getByTestId('contact-detail').textContent()).toBe('JR');
    const found = await page.evaluate(
      async () => (await (await fetch('/api/v1/patients?q=Reyes')).json()).items as { dateOfBirth: string }[],
    );
    expect(found).toHaveLength(1);
    expect(found[0].dateOfBirth.slice(0, 10)).toBe('1990-04-02');

    // The same person writing from another account: registering them again offers the record on file.
    await simulate('It is Jordan again, from my other phone', 777006, 'Jordan', 'Reyes');
    await page.getByTestId('conversation-item').filter({ hasText: 'other phone' }).click();
    await page.getByTestId('link-patient').click();
    await dialog.getByTestId('register-patient').click();
    expect(await dialog.getByLabel('Given name').inputValue()).toBe('Jordan');
    expect(await dialog.getByLabel('Family name').inputValue()).toBe('Reyes');
    await dialog.getByLabel('Date of birth').fill('1990-04-02');
    await dialog.getByTestId('patient-form-submit').click();
    const onFile = dialog.getByTestId('duplicate-warning');
    await onFile.waitFor();
    await onFile.getByRole('button', { name: 'Link this patient' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    await page.getByTestId('linked-patient').getByText('Jordan Reyes').waitFor();
    expect(await page.evaluate(async () => (await (await fetch('/api/v1/patients?q=Reyes')).json()).items.length)).toBe(
      1,
    );
  });

  it('a Free workspace gets the plan notice and asks nothing of the channels API (no 403s, no stream retrying)', async () => {
    const free = await harness.createWorkspace({ tier: 'free' });
    const other = await harness.newPage();
    const asked: string[] = [];
    other.on('request', (r) => {
      if (r.url().includes('/api/v1/channels')) asked.push(new URL(r.url()).pathname);
    });
    await signIn(other, free.admin.email, free.admin.password);
    await other.goto('/inbox');
    await other.getByTestId('inbox-free').waitFor();
    await other.goto('/patients');
    await other.getByRole('heading', { name: 'Patients' }).waitFor();
    await other.waitForTimeout(500);
    expect(asked).toEqual([]);
  });

  it('filters by channel and, at 390 px, shows the list, then the thread with a way back', async () => {
    await page.goto('/inbox?channel=sms');
    await page.getByText('Nothing on SMS yet.').waitFor();
    // The filters offer the channels connected (and the one asked for), not all six.
    expect(await page.locator('.inbox-filters .filter-chip').allTextContents()).toEqual(['All', 'Telegram', 'SMS']);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/inbox');
    await page.getByTestId('conversation-item').first().waitFor();
    // The list is the whole page: no "pick one on the left" placeholder under it.
    expect(await page.getByText('Choose a conversation').isVisible()).toBe(false);
    // From the keyboard: opening a conversation puts the focus on its heading (the list item is gone), and
    // going back puts it on the conversation just left.
    const first = page.getByTestId('conversation-item').first();
    const firstId = await first.getAttribute('data-conversation-id');
    await first.focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('conversation-view').waitFor();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('conversation-heading');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByTestId('thread-back').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('conversation-list').waitFor();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-conversation-id')))
      .toBe(firstId);
    await page.setViewportSize({ width: 1280, height: 900 });
    // Side by side, the empty thread pane says what to do.
    await page.getByText('Choose a conversation').waitFor();
  });
});
