// Wall-clock time in IANA zones through Intl (no hand-written DST rules): "floating" times are the
// local clock of a zone written as if it were UTC, which is what RFC 5545 recurrence steps through.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when Intl knows the zone. */
export function isTimeZone(name: string): boolean {
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of an instant in a zone, read from Intl (whole seconds). */
function wallClock(instantMs: number, timeZone: string): number {
  const p = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(instantMs))
      .map((x) => [x.type, x.value]),
  );
  return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
}

/**
 * A zone's UTC offset is the same all through most 6-hour spans: when it is the same at a span's
 * first and last second, every instant in it uses it (a zone never changes its offset twice
 * within six hours). Intl is slow (a week view asks for thousands of wall clocks), so offsets are
 * kept per (zone, span); a span holding a transition is marked and read from Intl each time.
 */
const SPAN_MS = 6 * 3_600_000;
const MAX_SPANS = 100_000;
const spanOffsets = new Map<string, number>();

function spanOffset(span: number, timeZone: string): number {
  const key = `${timeZone}|${span}`;
  let offset = spanOffsets.get(key);
  if (offset === undefined) {
    const first = span * SPAN_MS;
    const last = first + SPAN_MS - 1000;
    const a = wallClock(first, timeZone) - first;
    const b = wallClock(last, timeZone) - last;
    offset = a === b ? a : Number.NaN;
    if (spanOffsets.size >= MAX_SPANS) spanOffsets.clear();
    spanOffsets.set(key, offset);
  }
  return offset;
}

/** The wall clock of an instant in a zone, as floating epoch ms (its UTC fields are the local time). */
export function toFloating(instantMs: number, timeZone: string): number {
  const offset = spanOffset(Math.floor(instantMs / SPAN_MS), timeZone);
  if (Number.isNaN(offset)) return wallClock(instantMs, timeZone);
  return Math.floor(instantMs / 1000) * 1000 + offset;
}

/** The instant at which the zone's wall clock shows `floatingMs` (in a spring-forward gap, the later offset). */
export function fromFloating(floatingMs: number, timeZone: string): number {
  let guess = floatingMs;
  for (let i = 0; i < 3; i++) {
    const shown = toFloating(guess, timeZone);
    if (shown === floatingMs) return guess;
    guess += floatingMs - shown;
  }
  return guess;
}

/** `2026-11-24T09:00:00` for the instant in `timeZone`. */
export function localDateTime(iso: string, timeZone: string): string {
  return new Date(toFloating(Date.parse(iso), timeZone)).toISOString().slice(0, 19);
}
