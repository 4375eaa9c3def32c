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

/** The wall clock of an instant in a zone, as floating epoch ms (its UTC fields are the local time). */
export function toFloating(instantMs: number, timeZone: string): number {
  const p = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(instantMs))
      .map((x) => [x.type, x.value]),
  );
  return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
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
