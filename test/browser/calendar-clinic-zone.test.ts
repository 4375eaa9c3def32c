/**
 * The calendar in the clinic's time zone: a workspace in America/New_York seen from a browser in Tokyo shows and
 * takes New York times (the 8:30 huddle at 8:30, the 9:00 slot stored as 14:00Z), says so, and the patient record's
 * visits and sessions follow it. (The browser's zone alone, with no workspace zone, is calendar.test.ts's.)
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, type BrowserHarness, signIn, startHarness, type TestWorkspace } from './harness.js';

const NY = 'America/New_York';
const headers = { 'content-type': 'application/json', 'x-requested-with': 'fetch' };

/** Today in New York, `YYYY-MM-DD`, `days` on. */
const newYorkDay = (days = 0) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: NY }).format(new Date(Date.now() + days * 86_400_000));

/** The instant of a wall-clock time in New York, EST or EDT as that day has it. */
function newYorkTime(day: string, hours: number, minutes: number): Date {
  const [y, m, d] = day.split('-').map(Number);
  const asUtc = Date.UTC(y, m - 1, d, hours, minutes);
  const offset = new Intl.DateTimeFormat('en-US', { timeZone: NY, timeZoneName: 'shortOffset' })
    .formatToParts(new Date(asUtc))
    .find((part) => part.type === 'timeZoneName')?.value;
  return new Date(asUtc - Number(/GMT([+-]\d+)/.exec(offset ?? '')?.[1] ?? 0) * 3_600_000);
}

interface ApiEvent {
  id: string;
  title: string;
  start: string;
  end: string;
  timeZone: string;
}

/** Calls the API from the page, as the signed-in user. */
const call = <T>(page: Page, method: string, path: string, body?: unknown) =>
  page.evaluate(
    async ({ method, path, body, headers }) => {
      const response = await fetch(`/api/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${await response.text()}`);
      return (response.status === 204 ? null : await response.json()) as T;
    },
    { method, path, body, headers },
  );

describe('calendar in the clinic time zone', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let page: Page;
  let calendarId = '';
  let hostUserId = '';

  const events = async (from: string, to: string) =>
    (
      await call<{ items: ApiEvent[] }>(
        page,
        'GET',
        `/calendar/events?timeMin=${encodeURIComponent(from)}&timeMax=${encodeURIComponent(to)}`,
      )
    ).items;

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'advanced' });
    // The browser is in Tokyo (14 hours ahead of New York in November); the clinic is in New York.
    page = await harness.newPage({ timezoneId: 'Asia/Tokyo' });
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await call(page, 'PATCH', '/workspace', { timeZone: NY });
    await page.goto('/calendar?date=2026-11-24');
    await page.getByTestId('connect-google').click();
    await page.waitForURL(/\/calendar/);
    await page.getByTestId('connection').first().waitFor();
    const calendars = await call<{ items: { id: string; primary: boolean; hostUserId: string }[] }>(
      page,
      'GET',
      '/calendar/calendars',
    );
    const primary = calendars.items.find((c) => c.primary) ?? calendars.items[0];
    calendarId = primary?.id ?? '';
    hostUserId = primary?.hostUserId ?? '';
    await call(page, 'POST', '/calendar/events', {
      calendar: calendarId,
      draft: { title: 'Morning huddle', start: '2026-11-24T13:30:00Z', end: '2026-11-24T14:00:00Z', timeZone: NY },
    });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('shows the 13:30Z huddle at 8:30 on its New York day, and says the times are the clinic’s', async () => {
    await page.goto('/calendar?date=2026-11-24');
    const huddle = page.locator('.fc-timegrid-col[data-date="2026-11-24"] .fc-event', { hasText: 'Morning huddle' });
    await huddle.waitFor();
    expect(await huddle.textContent()).toContain('Tue, Nov 24, 8:30–9:00 AM, Morning huddle');
    // At the 8:30 line of the grid (the browser's own zone would put it at 22:30).
    const lane = await page.locator('.fc-timegrid-slot-lane[data-time="08:30:00"]').boundingBox();
    const box = await huddle.boundingBox();
    expect(lane && box && Math.abs(box.y - lane.y)).toBeLessThan(4);
    expect(await page.getByTestId('time-zone').textContent()).toBe('New York time (EST)');
    expect(await page.getByTestId('calendar-zone').textContent()).toBe(
      "Times in New York time (EST), the clinic's; this device is on Tokyo time (GMT+9)",
    );
    // Opened, the dialog names the clinic's day and times.
    await huddle.click();
    expect(await page.getByTestId('event-date').inputValue()).toBe('2026-11-24');
    expect(await page.getByTestId('event-start').inputValue()).toBe('08:30');
    expect(await page.getByTestId('event-end').inputValue()).toBe('09:00');
    // And says whose they are (the device is elsewhere), as the times' description.
    expect(await page.getByTestId('event-zone').textContent()).toBe("Times in New York time (EST), the clinic's");
    const zoneId = await page.getByTestId('event-zone').getAttribute('id');
    expect(await page.getByTestId('event-start').getAttribute('aria-describedby')).toBe(zoneId);
    expect(await axeProblems(page, '[data-testid="event-dialog"]')).toEqual([]);
    await page.keyboard.press('Escape');
    await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    expect(await axeProblems(page, '[data-testid="calendar-page"]')).toEqual([]);
  });

  it('a click on the 9:00 slot books 9:00 New York time: 14:00Z, in the clinic’s zone', async () => {
    await page.goto('/calendar?date=2026-11-24');
    await page.locator('.fc-event', { hasText: 'Morning huddle' }).waitFor();
    const lane = await page.locator('.fc-timegrid-slot-lane[data-time="09:00:00"]').boundingBox();
    const column = await page.locator('.fc-timegrid-col[data-date="2026-11-24"]').boundingBox();
    if (!lane || !column) throw new Error('no time grid');
    await page.mouse.move(column.x + column.width / 2, lane.y + lane.height / 2);
    await page.mouse.down();
    await page.mouse.up();
    await page.getByTestId('event-dialog').waitFor();
    expect(await page.getByTestId('event-date').inputValue()).toBe('2026-11-24');
    expect(await page.getByTestId('event-start').inputValue()).toBe('09:00');
    await page.getByTestId('event-title').fill('Team check-in');
    await page.getByTestId('event-save').click();
    await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    await page.locator('.fc-event', { hasText: 'Team check-in' }).waitFor();
    const made = (await events('2026-11-24T00:00:00Z', '2026-11-25T12:00:00Z')).find(
      (e) => e.title === 'Team check-in',
    );
    expect(made && new Date(made.start).toISOString()).toBe('2026-11-24T14:00:00.000Z');
    expect(made && new Date(made.end).toISOString()).toBe('2026-11-24T14:30:00.000Z');
    expect(made?.timeZone).toBe(NY);
    // The day view reads the clinic's day: both events, in the day's task picker too.
    await page.goto('/calendar?date=2026-11-24&view=day');
    const picker = page.getByTestId('task-event');
    await expect.poll(() => picker.locator('option').allTextContents()).toContain('8:30 AM Morning huddle');
    expect(await picker.locator('option').allTextContents()).toContain('9:00 AM Team check-in');
  });

  it('today’s column and the now line are New York’s, also when Tokyo is already on the next day', async () => {
    const late = await harness.newPage({ timezoneId: 'Asia/Tokyo' });
    await late.setViewportSize({ width: 1280, height: 900 });
    // 5 PM on Tuesday in New York: 7 AM on Wednesday in Tokyo.
    await late.clock.setFixedTime(new Date('2026-11-24T22:00:00Z'));
    await signIn(late, workspace.admin.email, workspace.admin.password);
    await late.goto('/calendar');
    const today = late.locator('.fc-timegrid-col.fc-day-today');
    await today.waitFor();
    expect(await today.getAttribute('data-date')).toBe('2026-11-24');
    // The now line at 5 PM.
    const line = await today.locator('.fc-timegrid-now-indicator-line').boundingBox();
    const five = await late.locator('.fc-timegrid-slot-lane[data-time="17:00:00"]').boundingBox();
    expect(line && five && Math.abs(line.y - five.y)).toBeLessThan(4);
    await late.getByTestId('view-day').click();
    await late.waitForURL(/date=2026-11-24/);
    await late.close();
  });

  it('the patient record lists a visit and books sessions in New York time', async () => {
    const day = newYorkDay(7);
    const patient = await call<{ id: string }>(page, 'POST', '/patients', { givenName: 'Tess', familyName: 'Tokyo' });
    await call(page, 'POST', '/calendar/events', {
      calendar: calendarId,
      draft: {
        title: 'Visit: Tess Tokyo',
        start: newYorkTime(day, 8, 30).toISOString(),
        end: newYorkTime(day, 9, 0).toISOString(),
        timeZone: NY,
        patientId: patient.id,
        hostUserId,
      },
    });
    await page.goto(`/patients/${patient.id}?tab=appointments`);
    const visit = page.getByTestId('appointment').filter({ hasText: 'Visit: Tess Tokyo' });
    await visit.waitFor();
    const dayWords = new Date(`${day}T12:00:00Z`).toLocaleDateString('en-US', {
      timeZone: 'UTC',
      weekday: 'short',
      month: 'short',
      day: 'numeric',
      year: 'numeric',
    });
    expect((await visit.textContent())?.replace(/[\u202f\u2009]/g, ' ')).toContain(`${dayWords} · 8:30 AM–9:00 AM`);
    // Open in calendar: that New York day.
    expect(await visit.getByRole('link', { name: 'Open in calendar' }).getAttribute('href')).toContain(`date=${day}`);
    // Said once above the list: the times are the clinic's.
    expect(await page.getByTestId('appointments-zone').textContent()).toMatch(
      /^Times in New York time \(E[SD]T\), the clinic's\.$/,
    );
    expect(await axeProblems(page, '[data-testid="patient-appointments"]')).toEqual([]);

    await call(page, 'POST', `/patients/${patient.id}/authorizations`, {
      service: 'speech-therapy',
      units: 2,
      unitMinutes: 30,
      validFrom: '2026-01-01',
      validTo: '2027-12-31',
    });
    await page.goto(`/patients/${patient.id}?tab=authorizations`);
    await page.getByTestId('schedule-sessions').click();
    await page.getByTestId('schedule-sessions-dialog').waitFor();
    await page.getByTestId('sessions-date').fill('2027-01-04');
    await page.getByTestId('sessions-time').fill('10:00');
    expect(await page.getByTestId('sessions-zone').textContent()).toBe("Times in New York time (EST), the clinic's");
    await page.getByTestId('sessions-book').click();
    await page.getByTestId('schedule-sessions-dialog').waitFor({ state: 'detached' });
    // The next session, as the calendar shows it, with its zone's name.
    await expect
      .poll(async () => (await page.getByTestId('authorization').textContent())?.replace(/[\u202f\u2009]/g, ' '))
      .toContain('next session Jan 4, 2027, 10:00 AM, New York time (EST)');
    const usage = await call<{ items: { sessions: { start: string }[] }[] }>(
      page,
      'GET',
      `/calendar/sessions?patientId=${patient.id}`,
    );
    const starts = usage.items.flatMap((a) => a.sessions.map((s) => new Date(s.start).toISOString())).sort();
    // 10:00 EST each week, whatever zone the device is on.
    expect(starts).toEqual(['2027-01-04T15:00:00.000Z', '2027-01-11T15:00:00.000Z']);
  });

  it('an authorization is valid through its last day at the clinic, also after 7 PM in New York (UTC’s next day)', async () => {
    const evening = await harness.newPage({ timezoneId: 'Asia/Tokyo' });
    // 8 PM on Tuesday 2026-11-24 in New York: Wednesday in UTC and in Tokyo.
    await evening.clock.setFixedTime(new Date('2026-11-25T01:00:00Z'));
    await signIn(evening, workspace.admin.email, workspace.admin.password);
    const patient = await call<{ id: string }>(evening, 'POST', '/patients', { givenName: 'Lena', familyName: 'Late' });
    await call(evening, 'POST', `/patients/${patient.id}/authorizations`, {
      service: 'occupational-therapy',
      units: 4,
      unitMinutes: 30,
      validFrom: '2026-11-01',
      validTo: '2026-11-24',
    });
    await evening.goto(`/patients/${patient.id}?tab=authorizations`);
    const card = evening.getByTestId('authorization');
    await card.waitFor();
    expect(await card.locator('.status-pill').textContent()).toBe('Active');
    expect(await evening.getByTestId('schedule-sessions').count()).toBe(1);
    await evening.close();
  });

  it('a device in the clinic’s own zone: the dialogs and the record say nothing about zones', async () => {
    const local = await harness.newPage({ timezoneId: NY });
    await local.setViewportSize({ width: 1280, height: 900 });
    await signIn(local, workspace.admin.email, workspace.admin.password);
    await local.goto('/calendar?date=2026-11-24');
    const huddle = local.locator('.fc-event', { hasText: 'Morning huddle' });
    await huddle.waitFor();
    await huddle.click();
    expect(await local.getByTestId('event-start').inputValue()).toBe('08:30');
    expect(await local.getByTestId('event-zone').count()).toBe(0);
    expect(await local.getByTestId('event-start').getAttribute('aria-describedby')).toBeNull();
    await local.keyboard.press('Escape');
    await local.getByTestId('event-dialog').waitFor({ state: 'detached' });
    const patient = await call<{ id: string }>(local, 'POST', '/patients', { givenName: 'Nora', familyName: 'Near' });
    await call(local, 'POST', `/patients/${patient.id}/authorizations`, {
      service: 'speech-therapy',
      units: 1,
      unitMinutes: 30,
      validFrom: '2026-01-01',
      validTo: '2027-12-31',
    });
    await local.goto(`/patients/${patient.id}?tab=appointments`);
    await local.getByTestId('book-visit').waitFor();
    await local.getByRole('heading', { name: 'Upcoming' }).waitFor();
    expect(await local.getByTestId('appointments-zone').count()).toBe(0);
    await local.goto(`/patients/${patient.id}?tab=authorizations`);
    await local.getByTestId('schedule-sessions').click();
    // (Another day than the Tokyo device's sessions: the same provider cannot be booked twice at once.)
    await local.getByTestId('sessions-date').fill('2027-02-02');
    await local.getByTestId('sessions-time').fill('11:00');
    expect(await local.getByTestId('sessions-zone').count()).toBe(0);
    await local.getByTestId('sessions-book').click();
    await local.getByTestId('schedule-sessions-dialog').waitFor({ state: 'detached' });
    const card = local.getByTestId('authorization');
    await expect
      .poll(async () => (await card.textContent())?.replace(/[\u202f\u2009]/g, ' '))
      .toContain('next session Feb 2, 2027, 11:00 AM');
    expect(await card.textContent()).not.toContain('New York time');
    await local.close();
  });

  it('the clinic’s Sunday evening is in that week, not in the next (7 PM on Nov 29 is Monday 9 AM in Tokyo)', async () => {
    await call(page, 'POST', '/calendar/events', {
      calendar: calendarId,
      draft: { title: 'Sunday wrap-up', start: '2026-11-30T00:00:00Z', end: '2026-11-30T00:30:00Z', timeZone: NY },
    });
    await page.goto('/calendar?date=2026-11-24');
    const wrapUp = page.locator('.fc-timegrid-col[data-date="2026-11-29"] .fc-event', { hasText: 'Sunday wrap-up' });
    await wrapUp.waitFor();
    expect(await wrapUp.textContent()).toContain('Sun, Nov 29, 7:00–7:30 PM, Sunday wrap-up');
    const lane = await page.locator('.fc-timegrid-slot-lane[data-time="19:00:00"]').boundingBox();
    const box = await wrapUp.boundingBox();
    expect(lane && box && Math.abs(box.y - lane.y)).toBeLessThan(4);
    // And not in the week after (Monday the 30th in Tokyo is still Sunday in New York).
    await page.goto('/calendar?date=2026-12-01');
    await page.locator('.fc-timegrid-col[data-date="2026-11-30"]').waitFor();
    await page.locator('.calendar-grid:not(.calendar-grid-busy)').waitFor();
    expect(await page.locator('.fc-event', { hasText: 'Sunday wrap-up' }).count()).toBe(0);
  });

  it('a drag to 10:00 stores 10:00 New York time (15:00Z in winter)', async () => {
    // A week ahead: a drop into the past is put back.
    const day = newYorkDay(7);
    await call(page, 'POST', '/calendar/events', {
      calendar: calendarId,
      draft: {
        title: 'Drag me east',
        start: newYorkTime(day, 8, 0).toISOString(),
        end: newYorkTime(day, 8, 30).toISOString(),
        timeZone: NY,
      },
    });
    await page.goto(`/calendar?date=${day}`);
    const chip = page.locator(`.fc-timegrid-col[data-date="${day}"] .fc-event`, { hasText: 'Drag me east' });
    await chip.waitFor();
    const from = await chip.boundingBox();
    const slot = await page.locator('.fc-timegrid-slot-lane[data-time="10:00:00"]').boundingBox();
    if (!from || !slot) throw new Error('no time grid');
    await page.mouse.move(from.x + from.width / 2, from.y + 4);
    await page.mouse.down();
    await page.mouse.move(from.x + from.width / 2, from.y + 20, { steps: 5 });
    await page.mouse.move(from.x + from.width / 2, slot.y + 4, { steps: 10 });
    await page.mouse.up();
    await page.getByText('Moved', { exact: true }).waitFor();
    const stored = async () =>
      (await events(newYorkTime(day, 0, 0).toISOString(), newYorkTime(day, 23, 59).toISOString())).find(
        (e) => e.title === 'Drag me east',
      );
    await expect
      .poll(async () => {
        const moved = await stored();
        return moved && [new Date(moved.start).toISOString(), new Date(moved.end).toISOString()];
      })
      .toEqual([newYorkTime(day, 10, 0).toISOString(), newYorkTime(day, 10, 30).toISOString()]);
  });

  it('a title-only change sends no times, and leaves 1:30 EST on the night of the repeated hour where it was', async () => {
    // 2026-11-01 06:30Z: 1:30 EST, the second 1:30 of that night in New York (05:30Z is the first, EDT).
    await call(page, 'POST', '/calendar/events', {
      calendar: calendarId,
      draft: { title: 'Night shift', start: '2026-11-01T06:30:00Z', end: '2026-11-01T07:00:00Z', timeZone: NY },
    });
    await page.goto('/calendar?date=2026-11-01');
    const chip = page.locator('.fc-timegrid-col[data-date="2026-11-01"] .fc-event', { hasText: 'Night shift' });
    await chip.waitFor();
    await chip.click();
    expect(await page.getByTestId('event-start').inputValue()).toBe('01:30');
    await page.getByTestId('event-title').fill('Night shift (handover)');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().includes('/api/v1/calendar/events'));
    await page.getByTestId('event-save').click();
    const body = (await sent).postDataJSON() as { draft: Record<string, unknown> };
    expect(body.draft).toEqual({ title: 'Night shift (handover)' });
    await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    const stored = (await events('2026-11-01T00:00:00Z', '2026-11-01T12:00:00Z')).find((e) =>
      e.title.startsWith('Night shift'),
    );
    expect(stored?.title).toBe('Night shift (handover)');
    expect(stored && new Date(stored.start).toISOString()).toBe('2026-11-01T06:30:00.000Z');
    expect(stored && new Date(stored.end).toISOString()).toBe('2026-11-01T07:00:00.000Z');
  });

  it('a device that changes zone with the page open: the clinic’s times stay the clinic’s, and what is sent too', async () => {
    await call(page, 'POST', '/calendar/events', {
      calendar: calendarId,
      draft: { title: 'Zone hop', start: '2026-11-26T13:30:00Z', end: '2026-11-26T14:00:00Z', timeZone: NY },
    });
    // A device in the clinic's own zone first: nothing to say about zones. (Its zone is set over CDP, which can
    // change it later; a context's timezoneId would refuse that: "Timezone override is already in effect".)
    const context = await harness.browser.newContext({ baseURL: harness.baseUrl, locale: 'en-US' });
    const hop = await context.newPage();
    const cdp = await context.newCDPSession(hop);
    await cdp.send('Emulation.setTimezoneOverride', { timezoneId: NY });
    await hop.setViewportSize({ width: 1280, height: 900 });
    await signIn(hop, workspace.admin.email, workspace.admin.password);
    await hop.goto('/calendar?date=2026-11-26');
    const chip = hop.locator('.fc-timegrid-col[data-date="2026-11-26"] .fc-event', { hasText: 'Zone hop' });
    await chip.waitFor();
    expect(await hop.getByTestId('calendar-zone').textContent()).toBe('Times in New York time (EST)');
    // The event open in its dialog when the device moves to Los Angeles, the page still open (Chromium changes a
    // live page's zone, without a reload).
    await chip.click();
    expect(await hop.getByTestId('event-start').inputValue()).toBe('08:30');
    await cdp.send('Emulation.setTimezoneOverride', { timezoneId: 'America/Los_Angeles' });
    expect(await hop.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe('America/Los_Angeles');
    // Moved to 9:00 in the dialog: 9:00 New York time, 14:00Z (not 17:00Z, 9:00 in Los Angeles).
    await hop.getByTestId('event-start').fill('09:00');
    await hop.getByTestId('event-save').click();
    await hop.getByTestId('event-dialog').waitFor({ state: 'detached' });
    await expect
      .poll(async () => {
        const moved = (await events('2026-11-26T00:00:00Z', '2026-11-27T12:00:00Z')).find(
          (e) => e.title === 'Zone hop',
        );
        return moved && [new Date(moved.start).toISOString(), new Date(moved.end).toISOString()];
      })
      .toEqual(['2026-11-26T14:00:00.000Z', '2026-11-26T14:30:00.000Z']);
    // No event says that the zone changed: the page reads it again when it gets the focus, and names both.
    await hop.evaluate(() => window.dispatchEvent(new Event('focus')));
    await expect
      .poll(() => hop.getByTestId('calendar-zone').textContent())
      .toBe("Times in New York time (EST), the clinic's; this device is on Los Angeles time (PST)");
    // The grid, drawn again: at 9:00 New York time (not 6:00, Los Angeles's), and so is the dialog.
    await expect.poll(() => chip.textContent()).toContain('9:00–9:30 AM');
    const lane = await hop.locator('.fc-timegrid-slot-lane[data-time="09:00:00"]').boundingBox();
    const box = await chip.boundingBox();
    expect(lane && box && Math.abs(box.y - lane.y)).toBeLessThan(4);
    await chip.click();
    expect(await hop.getByTestId('event-start').inputValue()).toBe('09:00');
    await hop.keyboard.press('Escape');
    await hop.getByTestId('event-dialog').waitFor({ state: 'detached' });
    await context.close();
  });

  it('on a phone in Tokyo: the day list at 8:30, the clinic-time note, no sideways scrolling, axe-clean', async () => {
    const phone = await harness.newPage({ timezoneId: 'Asia/Tokyo', phone: true });
    await signIn(phone, workspace.admin.email, workspace.admin.password);
    await phone.goto('/calendar?date=2026-11-24');
    await phone.locator('.fc-list').waitFor();
    const huddle = phone.getByRole('button', { name: /^Tue, Nov 24, 8:30–9:00 AM, Morning huddle/ });
    await huddle.waitFor();
    expect(await phone.getByTestId('calendar-zone').textContent()).toContain("the clinic's; this device is on Tokyo");
    expect(await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    expect(await axeProblems(phone, '[data-testid="calendar-page"]')).toEqual([]);
    // Its dialog at 390 px: the clinic-time note under the times, nothing wider than the screen.
    await huddle.click();
    await phone.getByTestId('event-zone').waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    const note = await phone.getByTestId('event-zone').boundingBox();
    expect(note && note.x + note.width).toBeLessThanOrEqual(390);
    expect(await axeProblems(phone, '[data-testid="event-dialog"]')).toEqual([]);
    await phone.close();
  });
});
