/**
 * The time zone names a workspace may choose (Settings → Time zone), for the server's check and the web app's list
 * alike: the IANA zones this runtime's Intl knows, under their current names, and UTC.
 *
 * ICU lists some zones under names IANA has since replaced (Asia/Calcutta for Asia/Kolkata, Europe/Kiev for
 * Europe/Kyiv) and leaves UTC out; nobody in Kolkata looks for Calcutta. Intl accepts either name of each pair.
 * Pure: no Node API, so the web app imports it too.
 */

/** ICU's older name → the current IANA name (both are accepted by Intl; the current one is shown and stored). */
export const CURRENT_ZONE_NAMES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/** True when this runtime's Intl knows the zone (any name it accepts, aliases included). */
export const knowsZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

let names: string[] | undefined;

/** Every zone a workspace may choose, sorted: Intl's list with current names, and UTC. */
export function timeZoneNames(): string[] {
  if (!names) {
    const listed = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    const current = listed.map((zone) => {
      const renamed = CURRENT_ZONE_NAMES[zone];
      return renamed && knowsZone(renamed) ? renamed : zone;
    });
    names = [...new Set([...current, 'UTC'])].sort();
  }
  return names;
}

let byLowerCase: Map<string, string> | undefined;

/**
 * The chosen zone as stored: one of `timeZoneNames()` whatever the letters' case, an older name as its current one
 * (`asia/calcutta` → `Asia/Kolkata`); null for anything else (`EST` and `US/Eastern`, which Intl also accepts,
 * included: a New York clinic set to EST would never change to daylight time).
 */
export function canonicalTimeZone(name: string): string | null {
  if (name.length === 0 || name.length > 64) return null;
  if (!byLowerCase) {
    byLowerCase = new Map(timeZoneNames().map((zone) => [zone.toLowerCase(), zone]));
    for (const [old, current] of Object.entries(CURRENT_ZONE_NAMES)) {
      if (byLowerCase.has(current.toLowerCase())) byLowerCase.set(old.toLowerCase(), current);
    }
  }
  return byLowerCase.get(name.toLowerCase()) ?? null;
}
