/**
 * The calendar's event dialog, clicked through in Chromium on its own workspace: dialogs describe
 * themselves by their description, the patient picker never takes a patient from the answer to what
 * was typed before, Delete while a save is on its way, Show as (busy/free), and the video room's state on the event.
 */
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeProblems,
  type BrowserHarness,
  signIn,
  startHarness,
  type TestWorkspace,
  uniqueSuffix,
  unlessAlreadyHandled,
} from './harness.js';

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

  const createPatient = (body: Record<string, string>) =>
    page.evaluate(
      async ({ body, headers }) => {
        const made = await fetch('/api/v1/patients', { method: 'POST', headers, body: JSON.stringify(body) });
        return ((await made.json()) as { id: string }).id;
      },
      { body, headers },
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

  it('the patient picker never takes a patient from the answer to what was typed before', async () => {
    const family = `Quill${uniqueSuffix()}`;
    const hans = await createPatient({ givenName: 'Hans', familyName: family });
    const josefa = await createPatient({ givenName: 'Josefa', familyName: `${family}mann` });
    // The answers for the longer texts take a while, as on a slow line: the list meanwhile is the one before.
    const slow = (url: URL) => url.pathname === '/api/v1/patients' && /m/.test(url.searchParams.get('q') ?? '');
    await page.route(slow, async (route) => {
      await new Promise((r) => setTimeout(r, 1000));
      await route.continue().catch(unlessAlreadyHandled);
    });
    await page.goto('/calendar?date=2026-12-14');
    await page.getByTestId('new-event').click();
    await page.getByTestId('event-title').fill('Picked with care');
    await page.getByTestId('event-date').fill('2026-12-15');
    await page.getByTestId('event-start').fill('11:00');
    await page.getByTestId('event-end').fill('11:30');
    const field = page.getByTestId('event-patient').getByRole('combobox');
    const options = page.getByTestId('event-patient-option');
    const chosen = page.getByTestId('event-patient-chosen');
    await field.click();
    await page.keyboard.type(family.toLowerCase());
    // The exact family name ranks first.
    await expect.poll(() => options.first().textContent()).toContain('Hans');
    expect(await options.count()).toBe(2);

    // Typing on and choosing the first at once (Enter): the list still shows Hans, who is no match for what is typed.
    await page.keyboard.type('mann');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => options.first().textContent(), { timeout: 5000 }).toContain('Josefa');
    expect(await options.count()).toBe(1);
    // Nothing was chosen, not even once the answer came: the field keeps what was typed and the list stays open.
    await page.waitForTimeout(400);
    expect(await field.inputValue()).toBe(`${family.toLowerCase()}mann`);
    expect(await chosen.count()).toBe(0);

    // Back to the shorter text; a click on Josefa in its list while the next answer is on its way picks her
    // once that answer holds her too.
    await field.fill(family.toLowerCase());
    await expect.poll(() => options.count()).toBe(2);
    await page.keyboard.type('m');
    await options.filter({ hasText: 'Josefa' }).click();
    await chosen.waitFor();
    expect(await field.inputValue()).toBe(`Josefa ${family}mann`);
    await page.unroute(slow);

    await page.getByTestId('event-save').click();
    await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    const patientOf = await page.evaluate(async () => {
      const query = new URLSearchParams({ timeMin: '2026-12-15T00:00:00Z', timeMax: '2026-12-16T00:00:00Z' });
      const items = (
        (await (await fetch(`/api/v1/calendar/events?${query}`)).json()) as {
          items: { title: string; patientId: string | null }[];
        }
      ).items;
      return items.find((e) => e.title === 'Picked with care')?.patientId;
    });
    expect(patientOf).toBe(josefa);
    expect(patientOf).not.toBe(hans);
  });

  it('typing over a chosen patient unchooses them, and a name typed but not chosen is refused, not dropped', async () => {
    const family = `Rook${uniqueSuffix()}`;
    const eleanor = await createPatient({ givenName: 'Eleanor', familyName: family });
    await createPatient({ givenName: 'Priya', familyName: `${family}son` });
    await page.goto('/calendar?date=2026-12-14');
    await page.getByTestId('new-event').click();
    await page.getByTestId('event-title').fill('Typed over');
    await page.getByTestId('event-date').fill('2026-12-16');
    await page.getByTestId('event-start').fill('13:00');
    await page.getByTestId('event-end').fill('13:30');
    const field = page.getByTestId('event-patient').getByRole('combobox');
    const options = page.getByTestId('event-patient-option');
    const chosen = page.getByTestId('event-patient-chosen');
    await field.click();
    await page.keyboard.type(family.toLowerCase());
    await expect.poll(() => options.first().textContent()).toContain('Eleanor');
    await options.filter({ hasText: 'Eleanor' }).click();
    await chosen.waitFor();

    // The receptionist types another name over her and leaves the list without choosing.
    await field.fill(`${family.toLowerCase()}son`);
    await expect.poll(() => options.first().textContent()).toContain('Priya');
    await page.keyboard.press('Escape');
    expect(await chosen.count()).toBe(0);
    await page.getByTestId('event-save').click();
    const error = page.getByTestId('event-error');
    await error.waitFor();
    expect(await error.textContent()).toContain(`No patient is chosen for “${family.toLowerCase()}son”`);
    // The field is marked and focused, so a screen reader reads why.
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => field.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await page.getByTestId('event-dialog').count()).toBe(1);

    // Cleared, the visit is saved without a patient; never with Eleanor, whom the field stopped naming.
    await field.fill('');
    await page.getByTestId('event-save').click();
    await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    const saved = await page.evaluate(async () => {
      const query = new URLSearchParams({ timeMin: '2026-12-16T00:00:00Z', timeMax: '2026-12-17T00:00:00Z' });
      const items = (
        (await (await fetch(`/api/v1/calendar/events?${query}`)).json()) as {
          items: { title: string; patientId: string | null }[];
        }
      ).items;
      return items.filter((e) => e.title === 'Typed over').map((e) => e.patientId ?? null);
    });
    expect(saved).toEqual([null]);
    expect(saved).not.toContain(eleanor);
  });

  it('Delete while a save is on its way is unavailable and says why; once the save has failed it deletes', async () => {
    await createEvent({ title: 'Busy save', start: '2026-12-22T10:00:00Z', end: '2026-12-22T10:30:00Z' });
    await page.goto('/calendar?date=2026-12-21');
    // The save takes a while, then the provider refuses it.
    let patches = 0;
    const events = (url: URL) => url.pathname === '/api/v1/calendar/events';
    await page.route(events, async (route) => {
      if (route.request().method() !== 'PATCH') return route.continue();
      patches += 1;
      await new Promise((r) => setTimeout(r, 1500));
      await route.fulfill({
        status: 409,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, code: 'scheduling_conflict' }),
      });
    });
    await chip('Busy save').click();
    await page.getByTestId('event-title').fill('Busy save, renamed');
    await page.getByTestId('event-save').click();
    const del = page.getByTestId('event-delete');
    await expect.poll(() => del.getAttribute('aria-disabled')).toBe('true');
    // Why, in words beside the buttons and as the button's description.
    const why = page.getByTestId('event-delete-wait');
    expect(await why.textContent()).toBe('Delete is unavailable while your changes are being saved.');
    expect(await del.getAttribute('aria-describedby')).toBe(await why.getAttribute('id'));
    // Pressed anyway (keyboard and mouse): no confirmation opens meanwhile, and the focus stays on the button.
    await del.focus();
    await page.keyboard.press('Enter');
    await del.click({ force: true });
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect(await del.evaluate((el) => el === document.activeElement)).toBe(true);

    // The save did not go through: the dialog says why, and Delete works again.
    await page.getByTestId('event-error').waitFor();
    expect(await del.getAttribute('aria-disabled')).toBeNull();
    expect(await why.count()).toBe(0);
    await page.unroute(events);
    expect(patches).toBe(1);
    await del.click();
    await page.getByTestId('confirm-delete-event').click();
    await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    await chip('Busy save').waitFor({ state: 'detached' });
  });

  it('Show as: busy when timed and free when all-day until chosen; the event’s own when editing, sent only when changed', async () => {
    const showAs = page.getByTestId('event-show-as');
    const allDay = page.getByTestId('event-all-day');
    const save = async () => {
      await page.getByTestId('event-save').click();
      await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    };
    const listed = () =>
      page.evaluate(async () => {
        const query = new URLSearchParams({ timeMin: '2027-02-01T00:00:00Z', timeMax: '2027-02-08T00:00:00Z' });
        const items = (
          (await (await fetch(`/api/v1/calendar/events?${query}`)).json()) as {
            items: { title: string; allDay: boolean; showAs: string }[];
          }
        ).items;
        return items.map((e) => [e.title, e.allDay, e.showAs]);
      });
    await page.goto('/calendar?date=2027-02-01');

    // A new event follows All day until someone chooses; the choice then stays.
    await page.getByTestId('new-event').click();
    expect(await page.getByTestId('event-close').textContent()).toBe('Cancel');
    await page.getByTestId('event-title').fill('Away at the CME conference');
    await page.getByTestId('event-date').fill('2027-02-03');
    expect(await showAs.inputValue()).toBe('busy');
    await allDay.check();
    expect(await showAs.inputValue()).toBe('free');
    expect(await page.getByRole('combobox', { name: 'Show as' }).count()).toBe(1);
    await showAs.selectOption('busy');
    await allDay.uncheck();
    await allDay.check();
    expect(await showAs.inputValue()).toBe('busy');
    expect(await axeProblems(page, '[data-testid="event-dialog"]')).toEqual([]);
    await save();
    // An all-day notice left alone is free.
    await page.getByTestId('new-event').click();
    await page.getByTestId('event-title').fill('Clinic photo day');
    await page.getByTestId('event-date').fill('2027-02-04');
    await allDay.check();
    await save();
    expect(await listed()).toEqual([
      ['Away at the CME conference', true, 'busy'],
      ['Clinic photo day', true, 'free'],
    ]);

    // Editing shows the event's own; a change leaves it out unless it was changed.
    const sent: { draft: Record<string, unknown> }[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PATCH' && request.url().includes('/api/v1/calendar/events'))
        sent.push(request.postDataJSON());
    });
    await chip('Away at the CME conference').click();
    expect(await showAs.inputValue()).toBe('busy');
    // An open event's way out says Close (a "Cancel" beside Delete read as cancelling the visit); a new one's Cancel.
    expect(await page.getByTestId('event-close').textContent()).toBe('Close');
    await page.getByTestId('event-title').fill('Away at the CME conference (no visits)');
    await save();
    await chip('Clinic photo day').click();
    expect(await showAs.inputValue()).toBe('free');
    await showAs.selectOption('busy');
    await save();
    expect(sent.map((r) => r.draft)).toEqual([{ title: 'Away at the CME conference (no visits)' }, { showAs: 'busy' }]);
    expect(await listed()).toEqual([
      ['Away at the CME conference (no visits)', true, 'busy'],
      ['Clinic photo day', true, 'busy'],
    ]);
  });

  it("shows a video room still being prepared, and one that could not be made with the provider's reason", async () => {
    const videoFaults = (fault?: Record<string, unknown>) =>
      fetch(`${harness.baseUrl}/_emulators/video/faults`, {
        method: fault ? 'POST' : 'DELETE',
        headers: fault ? { 'content-type': 'application/json' } : {},
        body: fault ? JSON.stringify(fault) : undefined,
      });
    const roomOf = (title: string, day: string) =>
      page.evaluate(
        async ({ title, day }) => {
          const query = new URLSearchParams({ timeMin: `${day}T00:00:00Z`, timeMax: `${day}T23:59:59Z` });
          const items = (
            (await (await fetch(`/api/v1/calendar/events?${query}`)).json()) as {
              items: { title: string; telehealthRoom: { status: string } | null }[];
            }
          ).items;
          return items.find((e) => e.title === title)?.telehealthRoom?.status ?? null;
        },
        { title, day },
      );
    // The video provider is out.
    await videoFaults({ operation: 'rooms.create', status: 503, times: 1000 });
    try {
      await createEvent({
        title: 'Video visit ahead',
        start: '2026-12-29T09:00:00Z',
        end: '2026-12-29T09:30:00Z',
        conference: 'meet',
      });
      // A visit already over: its room is given up at the first failure (nothing needs it any more).
      await createEvent({
        title: 'Video visit over',
        start: '2026-11-03T09:00:00Z',
        end: '2026-11-03T09:30:00Z',
        conference: 'meet',
      });
      await expect.poll(() => roomOf('Video visit over', '2026-11-03'), { timeout: 20_000 }).toBe('failed');
      expect(await roomOf('Video visit ahead', '2026-12-29')).toBe('pending');

      await page.goto('/calendar?date=2026-12-28');
      await chip('Video visit ahead').click();
      const status = page.getByTestId('room-status');
      await status.waitFor();
      expect(await status.textContent()).toContain('Video room: being prepared');
      // The provider's own call is there; Atrium's room has no link yet.
      expect(await page.getByTestId('join-link').allTextContents()).toEqual(['Join Google Meet']);
      // The room becomes ready while the dialog is open (the calendar's next read says so): its link shows by
      // itself, without closing and opening the event again.
      const ready = async (route: Route) => {
        const response = await route.fetch();
        const body = (await response.json()) as { items: Record<string, unknown>[] };
        for (const e of body.items)
          if (e.title === 'Video visit ahead' && e.telehealthRoom) {
            const roomId = (e.telehealthRoom as { roomId: string }).roomId;
            e.telehealthRoom = { roomId, status: 'warm', failureReason: null };
            e.telehealth = { roomId, joinUrl: `${harness.baseUrl}/telehealth/${roomId}` };
          }
        await route.fulfill({ response, json: body }).catch(unlessAlreadyHandled);
      };
      await page.route('**/api/v1/calendar/events?*', ready);
      try {
        await expect
          .poll(() => page.getByTestId('join-link').allTextContents(), { timeout: 15_000 })
          .toEqual(['Join Google Meet', 'Stand-by room (Atrium telehealth)']);
        await status.waitFor({ state: 'detached' });
      } finally {
        await page.unroute('**/api/v1/calendar/events?*', ready);
      }
      await page.keyboard.press('Escape');
      await page.getByTestId('event-dialog').waitFor({ state: 'detached' });

      await page.goto('/calendar?date=2026-11-02');
      await chip('Video visit over').click();
      await status.waitFor();
      const text = (await status.textContent()) ?? '';
      expect(text).toContain('Video room: could not be made');
      expect(text).toContain('The Google Meet call above still works.');
      expect(text).toMatch(/video provider could not create a room/);
      expect(await axeProblems(page, '[data-testid="event-dialog"]')).toEqual([]);
      await page.keyboard.press('Escape');
    } finally {
      await videoFaults();
    }
  });
});
