// The mail module's public entry: the only file other code imports from this module.

export { mailModule } from './module.js';
export { addressOf as inboundAddressOf } from './service.js';
