// A busy inbox: more conversations than one page (Load more, from the keyboard, with live updates still
// reordering every page loaded), a link to a conversation outside the pages loaded (the patient record's
// "Open in Inbox"), and a thread longer than one page (Load older messages).
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

describe('Inbox with more than a page', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  const botToken = `${(Date.now() + 29) % 1e9}:AAbrowserInboxPaging1`;
  // The oldest conversation, with 301 messages; then 120 newer ones with one message each.
  const oldChat = 880_001;
  const newChats = Array.from({ length: 120 }, (_, i) => 881_000 + i);

  /** Users write to the bot (through the Telegram emulator, which posts to the webhook), a few at a time. */
  const simulate = (updates: { chatId: number; firstName: string; text: string }[]) =>
    page.evaluate(
      async ({ botToken, updates }) => {
        const failed: number[] = [];
        for (let i = 0; i < updates.length; i += 6) {
          const results = await Promise.all(
            updates.slice(i, i + 6).map(async (u) => {
              const res = await fetch('/_emulators/telegram/simulate', {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ botToken, ...u }),
              });
              return (await res.json()).delivered === true;
            }),
          );
          results.forEach((ok, k) => {
            if (!ok) failed.push(i + k);
          });
        }
        return failed;
      },
      { botToken, updates },
    );

  const conversationIdOf = (chatId: number) =>
    page.evaluate(async (chatId) => {
      const list = await (await fetch('/api/v1/channels/conversations?limit=200')).json();
      return list.items.find((c: { contact: { externalId: string } }) => c.contact.externalId === String(chatId))
        .id as string;
    }, chatId);

  const activeTestId = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid'));

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
              credentials: { botToken, secretToken: 'inbox-paging-secret-token' },
            }),
          })
        ).json(),
      botToken,
    );
    expect(connected.id).toMatch(/^chn_/);
    const old = Array.from({ length: 301 }, (_, i) => ({
      chatId: oldChat,
      firstName: 'Olive Oldest',
      text: `(old message ${i + 1})`,
    }));
    expect(await simulate(old)).toEqual([]);
    expect(
      await simulate(newChats.map((chatId, i) => ({ chatId, firstName: `Newer ${i + 1}`, text: `hello ${i + 1}` }))),
    ).toEqual([]);
  }, 300_000);

  afterAll(async () => {
    await harness?.close();
  });

  it('shows the newest 100 conversations, then the rest with Load more (keyboard); live updates reorder them all', async () => {
    await page.goto('/inbox');
    await page.getByTestId('inbox-stream').getByText('Live').waitFor();
    const items = page.getByTestId('conversation-item');
    await expect.poll(() => items.count()).toBe(100);
    expect(await page.getByText('Olive Oldest').count()).toBe(0);
    // Tab from the last conversation reaches Load more; Enter loads the next page.
    await items.last().focus();
    await page.keyboard.press('Tab');
    expect(await activeTestId()).toBe('load-more');
    await page.keyboard.press('Enter');
    await expect.poll(() => items.count()).toBe(121);
    await expect.poll(() => items.last().textContent()).toContain('Olive Oldest');
    // All are shown: the button goes, and the focus it had moves to the words saying so.
    await page.getByTestId('load-more-end').getByText('21 more conversations loaded: all 121 are shown.').waitFor();
    expect(await activeTestId()).toBe('load-more-end');

    // A conversation of the second page gets a message: it moves to the top, and nothing is lost on the way.
    expect(
      await simulate([{ chatId: newChats[0], firstName: 'Newer 1', text: 'Still waiting for an answer' }]),
    ).toEqual([]);
    await expect.poll(() => items.first().textContent()).toContain('Still waiting for an answer');
    expect(await items.count()).toBe(121);
    expect(await items.first().getByTestId('conversation-unread').textContent()).toContain('2');
  });

  it('a link to a conversation outside the loaded page opens it; a link to none says so', async () => {
    const oldest = await conversationIdOf(oldChat);
    await page.goto(`/inbox?c=${oldest}`);
    await page.getByTestId('conversation-heading').getByText('Olive Oldest').waitFor();
    expect(await page.getByText('Conversation not found').count()).toBe(0);
    // The list still holds its first page only; the thread came by id.
    await expect.poll(() => page.getByTestId('conversation-item').count()).toBe(100);
    await page.goto('/inbox?c=chc_doesnotexist0');
    await page.getByText('Conversation not found').waitFor();
  });

  it('a thread of 301 messages shows the newest 100, and the older ones with Load older messages', async () => {
    const oldest = await conversationIdOf(oldChat);
    await page.goto(`/inbox?c=${oldest}`);
    const messages = page.getByTestId('inbox-messages').getByTestId('inbox-message');
    await expect.poll(() => messages.count()).toBe(100);
    // The thread with Load older messages above it, and the list with Load more below it: nothing serious for axe.
    await page.getByTestId('load-more').waitFor();
    const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']).analyze();
    const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    const older = page.getByTestId('load-older-messages');
    await older.focus();
    for (const count of [200, 300, 301]) {
      await page.keyboard.press('Enter');
      await expect.poll(() => messages.count()).toBe(count);
    }
    // The oldest is there: the button goes, and its focus moves to the messages.
    expect(await older.count()).toBe(0);
    await expect.poll(activeTestId).toBe('inbox-messages');
    // Each of the 301 once, the first one written among them.
    const shown = new Set((await messages.allTextContents()).map((t) => t.match(/\(old message \d+\)/)?.[0]));
    expect(shown.size).toBe(301);
    expect(shown.has('(old message 1)')).toBe(true);

    // A new message still arrives live at the bottom of the long thread.
    expect(await simulate([{ chatId: oldChat, firstName: 'Olive Oldest', text: 'One more thing' }])).toEqual([]);
    // Live over the stream; on a busy CI machine (three browser suites' worth of work behind it) it once took longer
    // than the poll's default 5 s.
    await expect.poll(() => messages.last().textContent(), { timeout: 20_000 }).toContain('One more thing');
    expect(await messages.count()).toBe(302);
  });
});
