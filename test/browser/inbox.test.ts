// The Inbox as the front desk uses it: a patient's Telegram message arrives live, opening it clears
// the unread count, a reply goes out through the provider and shows its status, linking the contact
// puts the thread on the patient's record; admins connect channels from the page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

describe('Inbox page', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  const botToken = `${Date.now() % 1e9}:AAbrowserInboxBot01`;

  const simulate = (text: string, chatId = 777001) =>
    page.evaluate(
      async ({ botToken, text, chatId }) =>
        (
          await fetch('/_emulators/telegram/simulate', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ botToken, chatId, firstName: 'Grace', lastName: 'Hopper', text }),
          })
        ).json(),
      { botToken, text, chatId },
    );

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

  it('an admin connects Telegram from the page; a bad token is refused in words', async () => {
    await page.goto('/inbox');
    await page.getByTestId('manage-channels').click();
    await page.getByTestId('connect-channel').selectOption('telegram');
    await page.getByTestId('credential-botToken').fill('not a token');
    await page.getByTestId('credential-secretToken').fill('browser-secret-token-1');
    await page.getByTestId('connect-submit').click();
    await page.getByTestId('connect-error').waitFor();
    await page.getByTestId('credential-botToken').fill(botToken);
    await page.getByTestId('connect-submit').click();
    await expect.poll(() => page.getByTestId('channel-webhook').count()).toBe(1);
    expect(await page.getByTestId('channel-webhook').textContent()).toMatch(
      /\/api\/v1\/telegram\/webhook\?connection=chn_/,
    );
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
    await page.keyboard.press('Enter');
    const mine = page.locator('[data-testid="inbox-message"][data-direction="out"]').filter({ hasText: 'Friday 9:30' });
    await mine.getByTestId('message-status').getByText('Sent').waitFor();
    const outbox = await page.evaluate(
      async () => (await (await fetch('/_emulators/telegram/sent?to=777001')).json()).items,
    );
    expect(outbox[0].text).toBe('Friday 9:30 works, see you then.');
  });

  it('links the contact to a patient; the thread shows on the patient record', async () => {
    const patientId = await page.evaluate(async () => {
      const res = await fetch('/api/v1/patients', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ givenName: 'Grace', familyName: 'Hopper', dateOfBirth: '1906-12-09' }),
      });
      return (await res.json()).id as string;
    });
    await page.getByTestId('link-patient').click();
    await page.getByTestId('link-patient-picker').getByRole('combobox').fill('Hopper');
    await page.getByTestId('link-patient-option').first().click();
    await page.getByTestId('link-patient-save').click();
    await page.getByTestId('linked-patient').getByText('Grace Hopper').waitFor();
    await page.goto(`/patients/${patientId}?tab=messages`);
    await page.getByTestId('patient-conversation').getByText('Friday 9:30 works, see you then.').waitFor();
  });

  it('filters by channel and, at 390 px, shows the list, then the thread with a way back', async () => {
    await page.goto('/inbox?channel=sms');
    await page.getByText('Nothing on SMS yet.').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/inbox');
    await page.getByTestId('conversation-item').first().waitFor();
    // The list is the whole page: no "pick one on the left" placeholder under it.
    expect(await page.getByText('Choose a conversation').isVisible()).toBe(false);
    await page.getByTestId('conversation-item').first().click();
    await page.getByTestId('conversation-view').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByTestId('thread-back').click();
    await page.getByTestId('conversation-list').waitFor();
    await page.setViewportSize({ width: 1280, height: 900 });
    // Side by side, the empty thread pane says what to do.
    await page.getByText('Choose a conversation').waitFor();
  });
});
