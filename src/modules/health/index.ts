// The health module's public entry: the only file other code imports from this module.
export { healthModule } from './module.js';
