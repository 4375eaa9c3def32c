// The notes module's public entry: the only file other code imports from this module.

export { notesModule } from './module.js';
export type { Note } from './schema.js';
export { findNote, getNote, recentNotes } from './service.js';
