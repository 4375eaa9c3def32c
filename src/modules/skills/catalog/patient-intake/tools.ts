import { AppError } from '../../../../platform/errors.js';
import { need, type ToolImpl } from '../types.js';

const registerPatient: ToolImpl = async (input, caps) => {
  const writer = need(caps.patientsWriter, 'patients:write');
  const reader = need(caps.patients, 'patients:read');
  const mrn = input.mrn as string | undefined;
  if (mrn) {
    const existing = (await reader.search(mrn, 20)).find((p) => p.mrn === mrn);
    if (existing) {
      throw new AppError('duplicate_mrn', 409, `MRN ${mrn} already belongs to a patient`, { patientId: existing.id });
    }
  }
  const patient = await writer.create({
    givenName: String(input.givenName),
    familyName: String(input.familyName),
    dateOfBirth: input.dateOfBirth as string | undefined,
    mrn,
  });
  return { patient, summary: `Registered ${patient.givenName} ${patient.familyName} (${patient.id}).` };
};

export const tools = { register_patient: registerPatient };
