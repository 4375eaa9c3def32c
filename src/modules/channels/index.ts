// The channels module's public entry: the only file other code imports from this module.
export { channelsModule } from './module.js';
