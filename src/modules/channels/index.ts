// The channels module's public entry: the only file other code imports from this module.
export { channelsModule } from './module.js';
export { twilioSignature } from './providers/twilio.js';
