import { need, type ToolImpl } from '../types.js';

/** "Maria Lopez (born 1980-03-02, MRN ML-1)": what tells two people apart, without internal ids. */
function describe(m: { name: string; dateOfBirth: string | null; mrn: string | null }): string {
  const details = [m.dateOfBirth && `born ${m.dateOfBirth}`, m.mrn && `MRN ${m.mrn}`].filter(Boolean);
  return details.length ? `${m.name} (${details.join(', ')})` : m.name;
}

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
      ? `${matches.length === 1 ? 'One patient matches' : `${matches.length} patients match`}: ${matches.map(describe).join('; ')}.`
      : `No patient matches "${query}".`,
  };
};

export const tools = { find_patient: findPatient };
