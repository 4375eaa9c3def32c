// Phone numbers as people read them. Providers give them bare ("14155550199" from WhatsApp, "+14155550199"
// from Twilio); the inbox shows "+1 415 555 0199", grouped by the number's own country's rules
// (libphonenumber's metadata). Anything that is not a number we can read is shown as it came.
import { parsePhoneNumberFromString } from 'libphonenumber-js/min';

export function formatPhone(raw: string): string {
  const digits = raw.trim();
  if (!/^\+?[\d\s().-]{6,20}$/.test(digits)) return raw;
  const parsed = parsePhoneNumberFromString(digits.startsWith('+') ? digits : `+${digits}`);
  return parsed?.isPossible() ? parsed.formatInternational() : raw;
}
