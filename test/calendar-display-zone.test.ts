// The calendar pages show and take times in the clinic's zone (the workspace's), whatever zone the browser is on:
// web/src/pages/calendar/time.ts turns instants into "shown" Dates (local fields = the clinic's wall clock) and
// back. Local Dates depend on the process's own zone, which a worker thread cannot change, so each browser zone
// runs the questions in a child process with that TZ (test/helpers/display-zone-probe.ts). The answers must be
// the same in every browser zone.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Question } from './helpers/display-zone-probe.js';

const PROBE = new URL('./helpers/display-zone-probe.ts', import.meta.url).pathname;
const NY = 'America/New_York';
const KOLKATA = 'Asia/Kolkata';

async function ask(browserZone: string, questions: Question[]): Promise<unknown[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', PROBE, JSON.stringify(questions)],
    // en-US: the zone abbreviations below (EST, GMT+5:30) are that locale's.
    { env: { ...process.env, TZ: browserZone, LANG: 'en_US.UTF-8', LC_ALL: 'en_US.UTF-8' }, encoding: 'utf8' },
  );
  return JSON.parse(stdout) as unknown[];
}

/** Each question with the answer it must get in every browser zone. */
const CASES: [string, Question, unknown][] = [
  // The brief's example: the 8:30 huddle is at 8:30, and the 9:00 slot is 14:00Z.
  ['13:30Z in New York in November', { shown: '2026-11-24T13:30:00Z', zone: NY }, '2026-11-24 08:30'],
  ['9:00 in New York in November', { instant: '2026-11-24 09:00', zone: NY }, '2026-11-24T14:00:00.000Z'],
  // Spring forward, 2026-03-08: 2:00 EST is 3:00 EDT.
  ['the minute before the change', { shown: '2026-03-08T06:59:00Z', zone: NY }, '2026-03-08 01:59'],
  ['the change itself', { shown: '2026-03-08T07:00:00Z', zone: NY }, '2026-03-08 03:00'],
  ['1:30 that night (EST)', { instant: '2026-03-08 01:30', zone: NY }, '2026-03-08T06:30:00.000Z'],
  // A time that never happens moves forward by the gap (as JavaScript's own Date does): 2:30 is 3:30 EDT.
  ['2:30, skipped that night', { instant: '2026-03-08 02:30', zone: NY }, '2026-03-08T07:30:00.000Z'],
  ['3:30 that night (EDT)', { instant: '2026-03-08 03:30', zone: NY }, '2026-03-08T07:30:00.000Z'],
  ['9:00 that day (EDT)', { instant: '2026-03-08 09:00', zone: NY }, '2026-03-08T13:00:00.000Z'],
  ['9:00 the day before (EST)', { instant: '2026-03-07 09:00', zone: NY }, '2026-03-07T14:00:00.000Z'],
  // Fall back, 2026-11-01: 1:00–2:00 happens twice.
  ['1:30 EDT', { shown: '2026-11-01T05:30:00Z', zone: NY }, '2026-11-01 01:30'],
  ['1:30 EST, an hour later', { shown: '2026-11-01T06:30:00Z', zone: NY }, '2026-11-01 01:30'],
  ['2:00 EST', { shown: '2026-11-01T07:00:00Z', zone: NY }, '2026-11-01 02:00'],
  // A time that happens twice is the first of the two.
  ['1:30, twice that night', { instant: '2026-11-01 01:30', zone: NY }, '2026-11-01T05:30:00.000Z'],
  ['9:00 that day (EST)', { instant: '2026-11-01 09:00', zone: NY }, '2026-11-01T14:00:00.000Z'],
  ['9:00 the day before (EDT)', { instant: '2026-10-31 09:00', zone: NY }, '2026-10-31T13:00:00.000Z'],
  // The week that holds the change: Monday to Monday at the clinic's midnights, 169 hours.
  [
    'the week of 2026-11-01 in New York',
    { week: '2026-11-01T15:00:00Z', zone: NY },
    ['2026-10-26T04:00:00.000Z', '2026-11-02T05:00:00.000Z'],
  ],
  [
    'the week of 2026-03-08 in New York',
    { week: '2026-03-08T15:00:00Z', zone: NY },
    ['2026-03-02T05:00:00.000Z', '2026-03-09T04:00:00.000Z'],
  ],
  // Weeks whose Sunday starts at 1:00 because the clocks spring forward at midnight (America/Santiago on
  // 2026-09-06, Africa/Cairo on Friday 2026-04-24): Monday still starts at 00:00, in a browser on that zone too.
  [
    'the week of 2026-09-06 in Santiago',
    { week: '2026-09-06T15:00:00Z', zone: 'America/Santiago' },
    ['2026-08-31T04:00:00.000Z', '2026-09-07T03:00:00.000Z'],
  ],
  [
    'the week of 2026-04-24 in Cairo',
    { week: '2026-04-24T10:00:00Z', zone: 'Africa/Cairo' },
    ['2026-04-19T22:00:00.000Z', '2026-04-26T21:00:00.000Z'],
  ],
  // East of UTC, half an hour off, and a day ahead of UTC in the evening.
  ['13:30Z in Kolkata', { shown: '2026-11-24T13:30:00Z', zone: KOLKATA }, '2026-11-24 19:00'],
  ['20:00Z in Kolkata: the next day', { shown: '2026-11-24T20:00:00Z', zone: KOLKATA }, '2026-11-25 01:30'],
  ['9:00 in Kolkata', { instant: '2026-11-24 09:00', zone: KOLKATA }, '2026-11-24T03:30:00.000Z'],
  [
    'midnight in Kolkata: the day before in UTC',
    { instant: '2026-11-24 00:00', zone: KOLKATA },
    '2026-11-23T18:30:00.000Z',
  ],
  ['13:30Z in Tokyo', { shown: '2026-11-24T13:30:00Z', zone: 'Asia/Tokyo' }, '2026-11-24 22:30'],
  ['13:30Z in UTC', { shown: '2026-11-24T13:30:00Z', zone: 'UTC' }, '2026-11-24 13:30'],
  // A change of half an hour (Lord Howe Island, 2026-10-04: 2:00 is 2:30).
  [
    '2:15 on Lord Howe, skipped',
    { instant: '2026-10-04 02:15', zone: 'Australia/Lord_Howe' },
    '2026-10-03T15:45:00.000Z',
  ],
  ['the same instant, shown', { shown: '2026-10-03T15:45:00Z', zone: 'Australia/Lord_Howe' }, '2026-10-04 02:45'],
  // The calendar's label.
  ['New York in November', { describe: NY, at: '2026-11-24T12:00:00Z' }, 'New York time (EST)'],
  ['New York in July', { describe: NY, at: '2026-07-14T12:00:00Z' }, 'New York time (EDT)'],
  [
    'a New York week over the change',
    { describe: NY, at: '2026-10-26T04:00:00Z', until: '2026-11-02T04:59:59Z' },
    'New York time (EDT/EST)',
  ],
  ['Kolkata', { describe: KOLKATA, at: '2026-11-24T12:00:00Z' }, 'Kolkata time (GMT+5:30)'],
  [
    'Buenos Aires',
    { describe: 'America/Argentina/Buenos_Aires', at: '2026-11-24T12:00:00Z' },
    'Buenos Aires time (GMT-3)',
  ],
  ['UTC', { describe: 'UTC', at: '2026-11-24T12:00:00Z' }, 'UTC'],
];

const BROWSER_ZONES = [
  'UTC',
  'Asia/Tokyo',
  'Asia/Kolkata',
  'America/New_York',
  'America/Los_Angeles',
  'Europe/Berlin',
  'America/Santiago',
  'Africa/Cairo',
];

describe('calendar times in the clinic zone (time.ts)', () => {
  it.each(BROWSER_ZONES)('answer the same in a browser on %s', async (browserZone) => {
    const answers = await ask(
      browserZone,
      CASES.map(([, q]) => q),
    );
    const got = Object.fromEntries(CASES.map(([name], i) => [name, answers[i]]));
    expect(got).toEqual(Object.fromEntries(CASES.map(([name, , want]) => [name, want])));
  });

  it("uses the workspace's zone when set, else the browser's, and says when it is not the device's", async () => {
    const [tokyoClinicNY, tokyoNone, tokyoUnknown, nyClinicNY] = [
      ...(await ask('Asia/Tokyo', [{ display: NY }, { display: null }, { display: 'Not/A_Zone' }])),
      ...(await ask(NY, [{ display: NY }])),
    ];
    // A device in Tokyo, a clinic in New York: the clinic's 8:30, and the note that it is not the device's zone.
    expect(tokyoClinicNY).toEqual({
      zone: NY,
      browser: 'Asia/Tokyo',
      clinic: true,
      shown: '2026-11-24 08:30',
      back: '2026-11-24T13:30:00.000Z',
      nowIsShown: true,
    });
    // No zone set (or one this browser does not know): the browser's own, as before.
    for (const none of [tokyoNone, tokyoUnknown]) {
      expect(none).toEqual({
        zone: 'Asia/Tokyo',
        browser: 'Asia/Tokyo',
        clinic: false,
        shown: '2026-11-24 22:30',
        back: '2026-11-24T13:30:00.000Z',
        nowIsShown: true,
      });
    }
    // A device in the clinic's own zone: nothing to say.
    expect(nyClinicNY).toMatchObject({ zone: NY, clinic: false, shown: '2026-11-24 08:30' });
  });

  it('converts right after the device moves to another zone with the page open', async () => {
    const [moved] = await ask(NY, [{ displayThenMove: NY, moveTo: 'America/Los_Angeles' }]);
    // One made in New York and kept (a dialog left open) still reads and takes New York times; one made after the
    // move says the device is elsewhere.
    expect(moved).toEqual({
      keptShown: '2026-11-24 08:30',
      keptBack: '2026-11-24T14:00:00.000Z',
      browser: 'America/Los_Angeles',
      clinic: true,
    });
  });
});
