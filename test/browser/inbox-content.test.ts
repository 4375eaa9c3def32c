// The Inbox shows what patients send besides words: a WhatsApp voice note reads "Voice message", a video
// "Video" with its caption, a file its name, a shared place and a contact card as words; no empty bubbles.
import { createHmac, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

describe('Inbox: messages that are not plain text', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  const appSecret = randomBytes(16).toString('hex');
  const phoneNumberId = '109876543210';
  let connectionId = '';

  /** Posts a WhatsApp notification with these messages, signed as Meta signs it. */
  const whatsapp = async (from: string, messages: Record<string, unknown>[]) => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102290129340398',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
                contacts: [{ profile: { name: 'Rosa Parks' }, wa_id: from }],
                messages: messages.map((m) => ({
                  from,
                  id: `wamid.${randomBytes(12).toString('hex')}`,
                  timestamp: String(Math.floor(Date.now() / 1000)),
                  ...m,
                })),
              },
            },
          ],
        },
      ],
    });
    const res = await fetch(`${harness.baseUrl}/api/v1/whatsapp/webhook?connection=${connectionId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status, await res.text()).toBe(200);
  };

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
    page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const connected = await page.evaluate(
      async (credentials) =>
        (
          await fetch('/api/v1/channels', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
            body: JSON.stringify({ channel: 'whatsapp', name: 'Front desk', credentials }),
          })
        ).json(),
      { appSecret, verifyToken: 'verify-token-1', accessToken: 'EAAGaccesstoken1', phoneNumberId },
    );
    connectionId = connected.id;
    expect(connectionId).toMatch(/^chn_/);
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('a voice note, a video, a file, a location and a contact card each say what they are', async () => {
    await whatsapp('4915112345678', [
      { type: 'audio', audio: { id: '1', mime_type: 'audio/ogg; codecs=opus', voice: true } },
      { type: 'video', video: { id: '2', mime_type: 'video/mp4', caption: 'How it looks today' } },
      { type: 'document', document: { id: '3', mime_type: 'application/pdf', filename: 'referral.pdf' } },
      { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Home' } },
      { type: 'contacts', contacts: [{ name: { formatted_name: 'Mum' }, phones: [{ phone: '+49 151 1234567' }] }] },
    ]);
    await page.goto('/inbox');
    const item = page.getByTestId('conversation-item').filter({ hasText: 'Rosa Parks' });
    // The list's preview names the last message's kind, never an empty line.
    await item.getByText('Contact card: Mum, +49 151 1234567').waitFor();
    // WhatsApp gives the number bare (4915112345678): it reads as a number, grouped by its country's rules.
    expect(await item.getByTestId('contact-detail').textContent()).toBe('+49 1511 2345678');
    await item.click();
    const messages = page.getByTestId('inbox-message');
    await expect.poll(() => messages.count()).toBe(5);
    const texts = await messages.evaluateAll((nodes) =>
      nodes.map((n) =>
        [...n.querySelectorAll('.message-body, [data-testid="message-attachment"]')]
          .map((e) => e.textContent?.trim())
          .join(' | '),
      ),
    );
    expect(texts).toEqual([
      '🎤 Voice message',
      'How it looks today | 🎬 Video',
      '📄 File: referral.pdf',
      '📍 Location: 52.52, 13.405 — Home',
      'Contact card: Mum, +49 151 1234567',
    ]);
    // The icon is decoration: a screen reader hears "Voice message".
    const voice = page.getByTestId('message-attachment').first();
    expect(await voice.locator('[aria-hidden="true"]').textContent()).toContain('🎤');
  });

  it('a refusal a retry cannot fix says what to do instead, and offers no Retry', async () => {
    await page.evaluate(async () => {
      await fetch('/_emulators/meta/faults', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          operation: 'messages.send',
          status: 400,
          body: {
            error: {
              message: '(#131047) Re-engagement message',
              type: 'OAuthException',
              code: 131047,
              error_data: {
                messaging_product: 'whatsapp',
                details:
                  'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
              },
            },
          },
        }),
      });
    });
    await page.getByTestId('inbox-reply').fill('Your results are in.');
    await page.keyboard.press('Enter');
    const failed = page
      .locator('[data-testid="inbox-message"][data-direction="out"]')
      .filter({ hasText: 'Your results are in' });
    const failure = failed.getByTestId('message-failure');
    await failure.waitFor();
    expect(await failure.getByTestId('message-status').textContent()).toContain(
      'More than 24 hours have passed since the patient last wrote',
    );
    expect(await failed.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    expect(await page.getByTestId('inbox-send-status').textContent()).not.toContain('Retry');
    // The provider's own words and code stay one click away.
    await failed.getByText('Details').click();
    expect(await failed.getByTestId('message-error').textContent()).toContain('code 131047');
    expect(await failed.getByTestId('message-error').textContent()).toContain('more than 24 hours have passed');
  });
});
