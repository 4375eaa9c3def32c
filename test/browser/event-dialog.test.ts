/**
 * The calendar's event dialog, clicked through in Chromium on its own workspace: dialogs describe
 * themselves by their description, the patient picker never takes a patient from the answer to what
 * was typed before, Delete while a save is on its way, and the video room's state on the event.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

const headers = { 'content-type': 'application/json', 'x-requested-with': 'fetch' };

describe('Event dialog', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  let calendarId: string;

  const chip = (title: string) => page.locator('.fc-event', { hasText: title });

  /** An event made through the API (the dialog is what these tests look at, not how events are made). */
  const createEvent = (draft: Record<string, unknown>) =>
    page.evaluate(
      async ({ calendar, draft, headers }) => {
        const made = await fetch('/api/v1/calendar/events', {
          method: 'POST',
          headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify({ calendar, draft }),
        });
        if (made.status !== 201) throw new Error(`create: ${made.status} ${await made.text()}`);
        return ((await made.json()) as { eventId: string }).eventId;
      },
      { calendar: calendarId, draft, headers },
    );

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'advanced' });
    page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto('/calendar?date=2026-12-07');
    await page.getByTestId('connect-google').click();
    await page.waitForURL(/\/calendar/);
    await page.getByTestId('calendar-legend').locator('li').first().waitFor();
    calendarId = await page.evaluate(async () => {
      const calendars = (await (await fetch('/api/v1/calendar/calendars')).json()) as { items: { id: string }[] };
      return calendars.items[0].id;
    });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('a dialog with a description is described by it (aria-describedby)', async () => {
    await createEvent({ title: 'Described', start: '2026-12-08T09:00:00Z', end: '2026-12-08T09:30:00Z' });
    await page.goto('/calendar?date=2026-12-07');
    await chip('Described').click();
    await page.getByTestId('event-delete').click();
    const confirm = page.getByRole('alertdialog');
    await confirm.waitFor();
    const describedBy = await confirm.getAttribute('aria-describedby');
    expect(describedBy).toBeTruthy();
    const description = page.locator(`[id="${describedBy}"]`);
    expect(await description.textContent()).toBe('“Described” is removed from the calendar.');
    // The event dialog has no description: it names none.
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    expect(await page.getByTestId('event-dialog').getAttribute('aria-describedby')).toBeNull();
    await page.keyboard.press('Escape');
  });
});
