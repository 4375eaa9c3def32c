// The assistant's built-in patient lookup (contract §4): offered whenever an installed skill holds
// a `patients:read` grant, so "check Maria Lopez's eligibility" can find Maria Lopez first. It
// answers with what the next tool needs (the id, the latest note) and what a person needs to tell
// two patients of the same name apart (date of birth, MRN). Audited like any tool.

import type { RequestContext } from '../../../platform/context.js';
import type { AppDeps } from '../../../platform/types.js';
import { recentNotes } from '../../notes/index.js';
import { listPatients } from '../../patients/index.js';
import { auditBuiltinTool } from '../dispatcher.js';
import type { FunctionTool } from './model-provider.js';

export const LOOKUP_FUNCTION = 'assistant__lookup_patient';

export const lookupTool: FunctionTool = {
  type: 'function',
  function: {
    name: LOOKUP_FUNCTION,
    description:
      'Find patients of this workspace by name (full or partial), optionally narrowed by date of birth. ' +
      'Call it before any tool that needs a patientId or noteId when the user names the patient.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 200, description: 'The name as the user wrote it' },
        dateOfBirth: { type: 'string', format: 'date' },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
};

export interface LookupMatch {
  patientId: string;
  name: string;
  dateOfBirth: string | null;
  mrn: string | null;
  latestNoteId: string | null;
}

export interface LookupResult {
  matches: LookupMatch[];
  summary: string;
}

const MAX_MATCHES = 5;

export async function lookupPatients(deps: AppDeps, ctx: RequestContext, input: unknown): Promise<LookupResult> {
  const args = (input && typeof input === 'object' ? input : {}) as { name?: unknown; dateOfBirth?: unknown };
  const name = typeof args.name === 'string' ? args.name.replace(/\s+/g, ' ').trim().slice(0, 200) : '';
  const dateOfBirth = typeof args.dateOfBirth === 'string' ? args.dateOfBirth : undefined;
  if (!name) {
    await auditBuiltinTool(deps, ctx, 'lookup_patient', 'error');
    return { matches: [], summary: 'I need a name to look a patient up.' };
  }
  const page = await listPatients(deps, ctx, { q: name, limit: 20 });
  const found = page.items.filter((p) => !dateOfBirth || p.dateOfBirth === dateOfBirth).slice(0, MAX_MATCHES);
  const matches: LookupMatch[] = [];
  for (const p of found) {
    const [latest] = await recentNotes(deps, ctx, p.id, 1);
    matches.push({
      patientId: p.id,
      name: `${p.givenName} ${p.familyName}`.trim(),
      dateOfBirth: p.dateOfBirth,
      mrn: p.mrn,
      latestNoteId: latest?.id ?? null,
    });
  }
  await auditBuiltinTool(deps, ctx, 'lookup_patient', 'ok', { matches: matches.length });
  const summary =
    matches.length === 0
      ? `No patient named ${name} was found.`
      : matches.length === 1
        ? `Found ${matches[0].name}${matches[0].dateOfBirth ? `, born ${matches[0].dateOfBirth}` : ''}.`
        : `Found ${matches.length} patients named ${name}.`;
  return { matches, summary };
}
