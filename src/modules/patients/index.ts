// The patients module's public entry: the only file other code imports from this module.

export { patientsModule } from './module.js';
export type { AuthorizationInput, Coverage, CoverageInput, CreatePatientInput, Patient } from './schema.js';
export type { AuthorizationUsage } from './service.js';
export {
  addAuthorization,
  addCoverage,
  createPatient,
  getPatient,
  listAuthorizations,
  listCoverages,
  listPatients,
  patientExists,
  patientNames,
  patientsNamedByWords,
  registerAuthorizationUsage,
  requirePatient,
} from './service.js';
