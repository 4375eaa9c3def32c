import { defineModule } from '../../platform/module.js';
import { patientRoutes } from './routes.js';
import { seedPatients } from './seed.js';
import * as tables from './tables.js';

export const patientsModule = defineModule({
  name: 'patients',
  tags: [{ name: 'patients', description: 'Patient records, authorizations and break-glass access' }],
  routes: patientRoutes,
  tables,
  seed: seedPatients,
});
