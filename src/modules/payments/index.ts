// The payments module's public entry: the only file other code imports from this module.
export { paymentsModule } from './module.js';
export { EMULATOR_SECRET_KEY, EMULATOR_WEBHOOK_SECRET, signPayload } from './stripe.js';
