// Run by test/calendar-display-zone.test.ts in a child process whose TZ is the "browser's" zone (a worker
// thread cannot have a zone of its own): answers each question about the calendar's time helpers on one line
// of JSON. Wall times are `YYYY-MM-DD HH:MM` as the shown Date's local fields read.
import {
  addDays,
  dateInput,
  describeZone,
  displayZone,
  fromInputs,
  mondayOf,
  timeInput,
  toInstant,
  toShown,
} from '../../web/src/pages/calendar/time.js';

export type Question =
  | { shown: string; zone: string }
  | { instant: string; zone: string }
  /** The week holding `around` (an instant) in `zone`: its Monday and the Monday after, as instants. */
  | { week: string; zone: string }
  | { describe: string; at: string; until?: string }
  | { display: string | null }
  /** A display zone made in this process's zone, asked again after the process moved to `moveTo`. */
  | { displayThenMove: string; moveTo: string };

const wall = (d: Date) => `${dateInput(d)} ${timeInput(d)}`;
const shownOf = (text: string) => {
  const [day = '', time = ''] = text.split(' ');
  const d = fromInputs(day, time);
  if (!d) throw new Error(`not a wall time: ${text}`);
  return d;
};

function answer(q: Question): unknown {
  if ('shown' in q) return wall(toShown(q.shown, q.zone));
  if ('instant' in q) return toInstant(shownOf(q.instant), q.zone).toISOString();
  if ('week' in q) {
    const monday = mondayOf(toShown(q.week, q.zone));
    return [toInstant(monday, q.zone).toISOString(), toInstant(addDays(monday, 7), q.zone).toISOString()];
  }
  if ('describe' in q) {
    return describeZone(q.describe, Date.parse(q.at), q.until === undefined ? undefined : Date.parse(q.until));
  }
  const at = '2026-11-24T13:30:00Z';
  if ('displayThenMove' in q) {
    const kept = displayZone(q.displayThenMove);
    const was = process.env.TZ;
    // Node follows a change of TZ at once, as Chromium follows a device's new zone in an open page.
    process.env.TZ = q.moveTo;
    try {
      const made = displayZone(q.displayThenMove);
      return {
        keptShown: wall(kept.shown(at)),
        keptBack: kept.instant(shownOf('2026-11-24 09:00')).toISOString(),
        browser: made.browser,
        clinic: made.clinic,
      };
    } finally {
      process.env.TZ = was;
    }
  }
  const z = displayZone(q.display);
  return {
    zone: z.zone,
    browser: z.browser,
    clinic: z.clinic,
    shown: wall(z.shown(at)),
    back: z.instant(z.shown(at)).toISOString(),
    nowIsShown: Math.abs(z.now().getTime() - toShown(Date.now(), z.zone).getTime()) < 60_000,
  };
}

const questions = JSON.parse(process.argv[2] ?? '[]') as Question[];
process.stdout.write(JSON.stringify(questions.map(answer)));
