import { describe, expect, it } from 'vitest';
import { CURRENT_ZONE_NAMES, canonicalTimeZone, timeZoneNames } from './time-zone-names.js';

describe('time zone names a workspace may choose', () => {
  it('lists current IANA names (not ICU older ones) and UTC, sorted, each known to Intl', () => {
    const names = timeZoneNames();
    expect(names).toContain('Asia/Kolkata');
    expect(names).toContain('Europe/Kyiv');
    expect(names).toContain('UTC');
    expect(names).toContain('America/New_York');
    for (const old of Object.keys(CURRENT_ZONE_NAMES)) expect(names).not.toContain(old);
    expect([...names].sort()).toEqual(names);
    for (const zone of names) expect(() => new Intl.DateTimeFormat('en-US', { timeZone: zone })).not.toThrow();
  });

  it('stores a name as IANA spells it today, whatever the case; refuses abbreviations and aliases', () => {
    expect(canonicalTimeZone('america/new_york')).toBe('America/New_York');
    expect(canonicalTimeZone('Asia/Calcutta')).toBe('Asia/Kolkata');
    expect(canonicalTimeZone('ASIA/KOLKATA')).toBe('Asia/Kolkata');
    expect(canonicalTimeZone('europe/kiev')).toBe('Europe/Kyiv');
    expect(canonicalTimeZone('utc')).toBe('UTC');
    for (const refused of ['EST', 'US/Eastern', 'EST5EDT', 'Etc/GMT+5', '', 'x'.repeat(65), 'America/New_York\u0000']) {
      expect(canonicalTimeZone(refused), refused).toBeNull();
    }
  });
});
