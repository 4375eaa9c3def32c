import { need, type ToolImpl } from '../types.js';
import { CODE_TABLE, suggestCodes } from './matcher.js';

function present(note: string, extra: Record<string, unknown> = {}) {
  const suggestions = suggestCodes(note);
  const cpt = suggestions.filter((s) => s.system === 'CPT');
  const icd = suggestions.filter((s) => s.system === 'ICD-10-CM');
  const list = (xs: typeof suggestions) =>
    xs.map((s) => `${s.code} (${s.evidence.map((e) => `"${e.phrase}"`).join(', ')})`).join(', ') || 'none';
  return {
    ...extra,
    codeTable: CODE_TABLE.version,
    cpt,
    icd10: icd,
    summary: suggestions.length
      ? `Suggested CPT: ${list(cpt)}. Suggested ICD-10-CM: ${list(icd)}. Verify against the note before billing.`
      : 'No codes from the code table matched this note.',
  };
}

const suggest: ToolImpl = async (input) => present(String(input.note));

const suggestForNote: ToolImpl = async (input, caps) => {
  const patients = need(caps.patients, 'patients:read');
  const note = await patients.note(String(input.noteId));
  const text = [
    `Subjective: ${note.subjective}`,
    `Objective: ${note.objective}`,
    `Assessment: ${note.assessment}`,
    `Plan: ${note.plan}`,
  ].join('\n');
  return present(text, { noteId: note.id, patientId: note.patientId });
};

export const tools = { suggest_codes: suggest, suggest_codes_for_note: suggestForNote };
