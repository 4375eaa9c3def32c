import { instagram, messenger, whatsapp } from './meta.js';
import { telegram } from './telegram.js';
import { sms } from './twilio.js';
import type { ChannelAdapter, ChannelName } from './types.js';
import { viber } from './viber.js';

export { twilioSignature } from './twilio.js';
export * from './types.js';
export { MalformedPayload } from './wire.js';

export const ADAPTERS: Record<ChannelName, ChannelAdapter<Record<string, string>>> = {
  telegram,
  whatsapp,
  messenger,
  instagram,
  viber,
  sms,
} as unknown as Record<ChannelName, ChannelAdapter<Record<string, string>>>;
