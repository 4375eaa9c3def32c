import { need, type ToolImpl } from '../types.js';

const findPatient: ToolImpl = async (input, caps) => {
  const patients = need(caps.patients, 'patients:read');
  const query = String(input.query).trim();
  const items = await patients.search(query, (input.limit as number | undefined) ?? 5);
  const matches = items.map((p) => ({
    id: p.id,
    name: `${p.givenName} ${p.familyName}`,
    dateOfBirth: p.dateOfBirth,
    mrn: p.mrn,
  }));
  return {
    query,
    matches,
    summary: matches.length
      ? `${matches.length} match(es): ${matches.map((m) => `${m.name} (${m.id}${m.mrn ? `, MRN ${m.mrn}` : ''})`).join('; ')}.`
      : `No patient matches "${query}".`,
  };
};

export const tools = { find_patient: findPatient };
