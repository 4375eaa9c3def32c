// The webhooks module's public entry: the only file other code imports from this module.
export { webhooksModule } from './module.js';
