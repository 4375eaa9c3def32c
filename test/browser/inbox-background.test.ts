// A conversation left open in a background tab does not mark new messages read for the whole clinic: they stay
// unread (on the server, for everyone) until the tab is looked at again. And a burst of live changes costs an open
// tab a few reads of its lists, not one per message.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

describe('Inbox in a background tab', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  const botToken = `${(Date.now() + 17) % 1e9}:AAbrowserBackgroundTab1`;
  const chatId = 777901;

  const simulate = (text: string, from: { chatId: number; firstName: string } = { chatId, firstName: 'Ida' }) =>
    page.evaluate(
      async ({ botToken, text, from }) =>
        (
          await fetch('/_emulators/telegram/simulate', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ botToken, chatId: from.chatId, firstName: from.firstName, lastName: 'Wells', text }),
          })
        ).json(),
      { botToken, text, from },
    );

  /** The clinic's unread count, as the server has it (everyone's badge). */
  const unreadOnServer = () =>
    page.evaluate(async () => (await (await fetch('/api/v1/channels/unread')).json()).total as number);

  /** What the browser tells the page about whether it is seen, as when the tab is switched away or back. */
  const setVisibility = (state: 'hidden' | 'visible') =>
    page.evaluate((state) => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => state === 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    }, state);

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
    page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const connected = await page.evaluate(
      async (botToken) =>
        (
          await fetch('/api/v1/channels', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
            body: JSON.stringify({
              channel: 'telegram',
              name: 'Front desk',
              credentials: { botToken, secretToken: 'background-tab-secret-token' },
            }),
          })
        ).json(),
      botToken,
    );
    expect(connected.id).toMatch(/^chn_/);
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('new messages stay unread while the tab is hidden, and are read once it is seen again', async () => {
    await page.goto('/inbox');
    await page.getByTestId('inbox-stream').getByText('Live').waitFor();
    expect((await simulate('Is the clinic open today?')).delivered).toBe(true);
    const item = page.getByTestId('conversation-item').filter({ hasText: 'Ida Wells' });
    await item.click();
    await page.getByTestId('inbox-message').filter({ hasText: 'open today' }).waitFor();
    await expect.poll(unreadOnServer).toBe(0);

    await setVisibility('hidden');
    expect((await simulate('Also, do you take walk-ins?')).delivered).toBe(true);
    // It arrives live in the open conversation, but nobody is looking: it stays unread for the clinic.
    await page.getByTestId('inbox-message').filter({ hasText: 'walk-ins' }).waitFor();
    await item.getByTestId('conversation-unread').waitFor();
    await page.waitForTimeout(700);
    expect(await unreadOnServer()).toBe(1);

    await setVisibility('visible');
    await expect.poll(unreadOnServer).toBe(0);
    await expect.poll(() => item.getByTestId('conversation-unread').count()).toBe(0);
  });

  it('a burst of messages from thirty patients refreshes the open inbox a few times, not once per message', async () => {
    await page.goto('/inbox');
    await page.getByTestId('inbox-stream').getByText('Live').waitFor();
    await page.getByTestId('conversation-item').first().waitFor();
    const reads = { lists: 0, unread: 0 };
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path === '/api/v1/channels/conversations') reads.lists += 1;
      if (path === '/api/v1/channels/unread') reads.unread += 1;
    });
    const senders = Array.from({ length: 30 }, (_, i) => ({ chatId: 778_000 + i, firstName: `Burst${i}` }));
    const answers = await Promise.all(senders.map((from) => simulate(`Question from ${from.firstName}`, from)));
    expect(answers.every((a) => a.delivered === true)).toBe(true);
    // Every one of them is listed, live…
    await expect
      .poll(
        () =>
          page
            .getByTestId('conversation-item')
            .filter({ hasText: /Burst\d+ Wells/ })
            .count(),
        { timeout: 10_000 },
      )
      .toBe(30);
    await page.waitForTimeout(800);
    // …with a handful of reads of the list and the counts (one per message before: thirty of each).
    expect(reads.lists).toBeGreaterThan(0);
    expect(reads.lists).toBeLessThanOrEqual(10);
    expect(reads.unread).toBeLessThanOrEqual(10);
  });
});
