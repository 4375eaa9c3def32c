// Every Drizzle table of the service, for typed queries and drizzle-kit.

export * from '../../modules/claims/tables.js';
export * from '../../modules/direct-messages/tables.js';
export * from '../../modules/identity/tables.js';
export * from '../../modules/marketplace/tables.js';
export * from '../../modules/notes/tables.js';
export * from '../../modules/patients/tables.js';
export * from '../../modules/skills/tables.js';
export * from '../../modules/webhooks/tables.js';
export * from '../jobs/tables.js';
export * from '../platform-tables.js';
