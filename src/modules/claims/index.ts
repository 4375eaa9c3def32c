// The claims module's public entry: the only file other code imports from this module.

export { claimsModule } from './module.js';
export type { Claim } from './schema.js';
export { getClaim, recentClaims } from './service.js';
