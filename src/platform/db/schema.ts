// The platform's own Drizzle tables: the schema the client is typed with. Modules query their tables
// through the query builder (`tx.select().from(table)`), which needs no schema registration, so the
// platform imports no module; drizzle-kit reads every tables.ts through drizzle.config.ts's globs.

export * from '../jobs/tables.js';
export * from '../oauth/tables.js';
export * from '../platform-tables.js';
