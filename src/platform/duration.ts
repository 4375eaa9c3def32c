const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `10s`, `1m`, `2h`, `1d` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!match) throw new Error(`Invalid duration "${text}" (use e.g. 500ms, 10s, 1m, 2h, 1d)`);
  return Math.round(Number(match[1]) * UNITS[match[2]]);
}

export function parseDurationList(text: string): number[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map(parseDuration);
}
