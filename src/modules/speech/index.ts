// The speech module's public entry: the only file other code imports from this module.
export { speechModule } from './module.js';
