import { describe, expect, it } from 'vitest';
import { fromFloating, localDateTime, toFloating } from './zoned-time.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Intl's answer, read the slow way (the parts of a formatted date) for every instant. */
function reference(instantMs: number, timeZone: string): number {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, format);
  }
  const p = Object.fromEntries(format.formatToParts(new Date(instantMs)).map((x) => [x.type, x.value]));
  return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
}

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/St_Johns', 'UTC'];

describe('zoned time', () => {
  it('agrees with Intl at every minute around DST changes (incl. half-hour and 30-minute shifts)', () => {
    const around = [
      Date.UTC(2026, 2, 8, 0),
      Date.UTC(2026, 2, 29, 0),
      Date.UTC(2026, 3, 4, 12),
      Date.UTC(2026, 9, 3, 12),
      Date.UTC(2026, 9, 25, 0),
      Date.UTC(2026, 10, 1, 0),
    ];
    for (const zone of ZONES)
      for (const start of around)
        for (let m = -36 * 60; m <= 36 * 60; m += 7) {
          const at = start + m * 60_000 + 12_345;
          expect(toFloating(at, zone)).toBe(reference(at, zone));
        }
  });

  it('agrees with Intl at random instants over a century', () => {
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 3000; i++) {
      const at = Math.floor(Date.UTC(1950, 0, 1) + next() * 100 * 365 * 86_400_000);
      const zone = ZONES[i % ZONES.length];
      expect(toFloating(at, zone)).toBe(reference(at, zone));
    }
  });

  it('finds the instant of a wall clock and prints it', () => {
    const at = fromFloating(Date.UTC(2026, 10, 24, 9, 0), 'Europe/Berlin');
    expect(new Date(at).toISOString()).toBe('2026-11-24T08:00:00.000Z');
    expect(localDateTime('2026-07-01T12:00:00Z', 'America/New_York')).toBe('2026-07-01T08:00:00');
  });
});
