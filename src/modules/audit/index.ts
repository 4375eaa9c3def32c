// The audit module's public entry: the only file other code imports from this module.
export { auditModule } from './module.js';
