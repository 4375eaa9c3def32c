// Dialogs that ask for something open on their first field, as New event opens on its title: opened from the
// keyboard, the focus is in that field (not on the dialog itself, from where the first Tab went to Close and a
// Space there shut the dialog), and what is typed goes into it. Inbox → Link to patient (the patient picker),
// Messages → New message (the first colleague), a record's Notes → Write a note (Subjective).
import { randomBytes } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboundPayload, providerId, signatureHeaders } from '../helpers/channels.js';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

/** Is the focus on this element? */
const hasFocus = (locator: Locator) => locator.evaluate((el) => el === document.activeElement);

/** Opens a dialog as a keyboard user does: the focus on its button, then Enter. */
async function openByKeyboard(button: Locator): Promise<void> {
  await button.focus();
  await button.press('Enter');
}

describe('dialogs open on their first field', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  const appSecret = randomBytes(16).toString('hex');
  const phoneNumberId = '109876543211';
  const family = `Natarajan${uniqueSuffix()}`;
  let patientId = '';

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'standard' });
    await harness.addMember(workspace.id, {
      email: `lee-${uniqueSuffix()}@example.test`,
      name: 'Dr. Lee',
      role: 'member',
      isProvider: true,
    });
    page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const created = await page.request.post('/api/v1/patients', {
      data: { givenName: 'Priya', familyName: family, dateOfBirth: '1985-04-12' },
      headers: { 'x-requested-with': 'fetch' },
    });
    expect(created.status()).toBe(201);
    patientId = ((await created.json()) as { id: string }).id;

    // A WhatsApp conversation in the Inbox, from a contact not linked to any patient.
    const connected = await page.request.post('/api/v1/channels', {
      data: {
        channel: 'whatsapp',
        name: 'Front desk',
        credentials: { appSecret, verifyToken: 'verify-token-1', accessToken: 'EAAGaccesstoken1', phoneNumberId },
      },
      headers: { 'x-requested-with': 'fetch' },
    });
    expect(connected.status(), await connected.text()).toBe(201);
    const connectionId = ((await connected.json()) as { id: string }).id;
    const credentials = { appSecret, phoneNumberId };
    const { body, contentType } = inboundPayload(
      'whatsapp',
      { id: providerId('whatsapp'), from: '4915112345678', name: 'Rosa Parks', text: 'Can I move my appointment?' },
      credentials,
    );
    const url = `${harness.baseUrl}/api/v1/whatsapp/webhook?connection=${connectionId}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': contentType, ...signatureHeaders('whatsapp', url, body, credentials) },
      body,
    });
    expect(res.status, await res.text()).toBe(200);
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('Inbox → Link to patient: the focus is in the patient picker, and typing searches', async () => {
    await page.goto('/inbox');
    await page.getByTestId('conversation-item').filter({ hasText: 'Rosa Parks' }).click();
    await openByKeyboard(page.getByTestId('link-patient'));
    const dialog = page.getByTestId('link-patient-dialog');
    const field = dialog.getByRole('combobox', { name: 'Patient' });
    await expect.poll(() => hasFocus(field)).toBe(true);
    await page.keyboard.type(family.slice(0, 9));
    expect(await field.inputValue()).toBe(family.slice(0, 9));
    // The picker's list opens in a popover outside the dialog's element.
    await page.getByTestId('link-patient-option').filter({ hasText: family }).waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
  });

  it('Messages → New message: the focus is on the first colleague, and Space chooses them', async () => {
    await page.goto('/messages');
    await openByKeyboard(page.getByTestId('new-message'));
    const dialog = page.getByTestId('new-thread-dialog');
    const first = dialog.getByRole('checkbox', { name: /Dr\. Lee/ });
    await expect.poll(() => hasFocus(first)).toBe(true);
    await page.keyboard.press('Space');
    expect(await first.isChecked()).toBe(true);
    // Still open, now asking for the first message.
    await dialog.getByText('Direct message:').waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
  });

  it('Notes → Write a note: the focus is in Subjective, and typing goes there', async () => {
    await page.goto(`/patients/${patientId}?tab=notes`);
    await openByKeyboard(page.getByTestId('write-note'));
    const dialog = page.getByTestId('note-dialog');
    const subjective = dialog.getByLabel('Subjective');
    await expect.poll(() => hasFocus(subjective)).toBe(true);
    await page.keyboard.type('Knee pain after running');
    expect(await subjective.inputValue()).toBe('Knee pain after running');
    // The focus stays where the person moves it (the dialog does not pull it back to Subjective).
    await page.keyboard.press('Tab');
    await page.keyboard.type('Swollen');
    expect(await dialog.getByLabel('Objective').inputValue()).toBe('Swollen');
    expect(await subjective.inputValue()).toBe('Knee pain after running');
  });
});
