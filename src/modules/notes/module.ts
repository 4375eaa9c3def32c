import { defineModule } from '../../platform/module.js';
import { noteRoutes } from './routes.js';
import { seedNotes } from './seed.js';
import * as tables from './tables.js';

export const notesModule = defineModule({
  name: 'notes',
  tags: [{ name: 'notes', description: 'SOAP notes: drafts and signing' }],
  routes: noteRoutes,
  tables,
  seed: seedNotes,
});
