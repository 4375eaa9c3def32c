/**
 * Short events in the calendar's time grid, in Chromium: a 30- or 45-minute visit with a patient (and
 * a video call) keeps its start, title and tags inside its block, in light and dark, at 1280 px (the
 * week) and at 390 px (the day list); what a block too low for its tags leaves out is still in its
 * accessible name.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

const headers = { 'content-type': 'application/json', 'x-requested-with': 'fetch' };
const WEEK = '/calendar?date=2026-12-07';

describe('Short events in the calendar', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  let calendarId: string;
  let patientId: string;

  const block = (title: string) => page.locator('.fc-timegrid-event', { hasText: title });

  /** Each element drawn in the event (the screen-reader text aside) whose box leaves the event's box. */
  const outside = (title: string) =>
    block(title).evaluate((event) => {
      const box = event.getBoundingClientRect();
      return [...event.querySelectorAll('*')]
        .filter((el) => !el.closest('.visually-hidden'))
        .flatMap((el) => {
          const r = el.getBoundingClientRect();
          if (r.width === 0 && r.height === 0) return [];
          const out =
            r.top < box.top - 0.5 ||
            r.bottom > box.bottom + 0.5 ||
            r.left < box.left - 0.5 ||
            r.right > box.right + 0.5;
          return out
            ? [
                `${el.className || el.tagName}: ${Math.round(r.bottom - box.bottom)}px below, ${Math.round(r.right - box.right)}px right`,
              ]
            : [];
        });
    });

  /** An event made through the API on the Google calendar. */
  const createEvent = (draft: Record<string, unknown>) =>
    page.evaluate(
      async ({ calendar, draft, headers }) => {
        const made = await fetch('/api/v1/calendar/events', {
          method: 'POST',
          headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify({ calendar, draft }),
        });
        if (made.status !== 201) throw new Error(`create: ${made.status} ${await made.text()}`);
      },
      { calendar: calendarId, draft, headers },
    );

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'advanced' });
    page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await page.goto(WEEK);
    await page.getByTestId('connect-google').click();
    await page.waitForURL(/\/calendar/);
    await page.getByTestId('calendar-legend').locator('li').first().waitFor();
    calendarId = await page.evaluate(async () => {
      const calendars = (await (await fetch('/api/v1/calendar/calendars')).json()) as { items: { id: string }[] };
      return calendars.items[0].id;
    });
    patientId = await page.evaluate(async (headers) => {
      const made = await fetch('/api/v1/patients', {
        method: 'POST',
        headers,
        body: JSON.stringify({ givenName: 'Ada', familyName: 'Lovelace' }),
      });
      return ((await made.json()) as { id: string }).id;
    }, headers);
    const visit = (title: string, day: string, start: string, minutes: number, extra: Record<string, unknown> = {}) => {
      const from = new Date(`2026-12-${day}T${start}:00Z`);
      return createEvent({
        title,
        start: from.toISOString(),
        end: new Date(from.getTime() + minutes * 60_000).toISOString(),
        patientId,
        ...extra,
      });
    };
    // Each followed at once by another event, which a tag spilling out of it would run into.
    await visit('Intake: Ada Lovelace', '08', '09:00', 30);
    await createEvent({ title: 'Next slot', start: '2026-12-08T09:30:00Z', end: '2026-12-08T10:00:00Z' });
    await visit('Follow-up: Ada Lovelace', '09', '09:00', 45);
    await createEvent({ title: 'Next one', start: '2026-12-09T09:45:00Z', end: '2026-12-09T10:15:00Z' });
    await visit('Video call: Ada Lovelace', '10', '09:00', 45, { conference: 'meet' });
    // The next week: every length from 20 minutes to two hours, three a day, each with a title longer
    // than the column (and none beside another, which would narrow it).
    for (let i = 0, minutes = 20; minutes <= 120; i++, minutes += 5) {
      const day = String(14 + Math.floor(i / 3));
      const start = ['07:00', '10:00', '14:00'][i % 3];
      await visit(`Long ${minutes} min: Augusta Ada King, Countess of Lovelace`, day, start, minutes);
    }
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('a 30- and a 45-minute visit with a patient keep their title, time and tags inside the block, light and dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(WEEK);
      await block('Intake: Ada Lovelace').waitFor();
      for (const title of ['Intake: Ada Lovelace', 'Follow-up: Ada Lovelace', 'Video call: Ada Lovelace']) {
        expect(await outside(title), `${title} (${scheme})`).toEqual([]);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    // 45 minutes: the title and, under it, the tags.
    expect(await block('Follow-up: Ada Lovelace').locator('.event-chip-tag').allTextContents()).toEqual(['Patient']);
    expect(await block('Video call: Ada Lovelace').locator('.event-chip-tag').allTextContents()).toEqual([
      'Meet',
      'Patient',
    ]);
    // 30 minutes: no room for a line of tags under two of title; the name still says it is a patient's visit.
    const short = block('Intake: Ada Lovelace');
    expect(await short.locator('.event-chip-tag').count()).toBe(0);
    expect(await short.locator('.event-chip-title').textContent()).toBe('9:00Intake: Ada Lovelace');
    expect(
      await page.getByRole('button', { name: 'Tue, Dec 8, 9:00–9:30 AM, Intake: Ada Lovelace, patient visit' }).count(),
    ).toBe(1);
    expect(await short.locator('.event-chip').getAttribute('title')).toBe('9:00 Intake: Ada Lovelace · patient visit');
  });

  it('no length from 20 minutes to two hours lets a long title or its tag out of the block', async () => {
    await page.goto('/calendar?date=2026-12-14');
    await block('Long 120 min').waitFor();
    for (let minutes = 20; minutes <= 120; minutes += 5) {
      expect(await outside(`Long ${minutes} min:`), `${minutes} minutes`).toEqual([]);
      // From 45 minutes on the tag has a line of its own under two or more of the title.
      expect(await block(`Long ${minutes} min:`).locator('.event-chip-tag').count(), `${minutes} minutes`).toBe(
        minutes >= 45 ? 1 : 0,
      );
    }
  });

  it('at 390 px the day list shows the tags beside the whole title, without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto('/calendar?date=2026-12-10');
      const row = page.locator('.fc-list-event', { hasText: 'Video call: Ada Lovelace' });
      await row.waitFor();
      expect(await row.locator('.event-chip-tag').allTextContents()).toEqual(['Meet', 'Patient']);
      const [cell, tags] = await Promise.all([
        row.locator('.fc-list-event-title').boundingBox(),
        row.locator('.event-chip-tags').boundingBox(),
      ]);
      expect(cell && tags).toBeTruthy();
      if (cell && tags) expect(tags.y + tags.height).toBeLessThanOrEqual(cell.y + cell.height);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(
        0,
      );
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
