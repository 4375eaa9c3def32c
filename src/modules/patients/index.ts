// The patients module's public entry: the only file other code imports from this module.

export { patientsModule } from './module.js';
export type { AuthorizationInput, CreatePatientInput, Patient } from './schema.js';
export {
  addAuthorization,
  createPatient,
  getPatient,
  listAuthorizations,
  listPatients,
  patientExists,
  patientNames,
  requirePatient,
} from './service.js';
