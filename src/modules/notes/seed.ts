// Demo notes: Eleanor Vance (Riverside Clinic) has a draft SOAP note by Dr. Lee, so the record's Notes tab
// (only its author may change or sign it) and "suggest billing codes for her last note" work on the first start.
import type { FastifyInstance } from 'fastify';
import type { SeedState } from '../../platform/module.js';
import { demoAdminContext, demoMemberContext } from '../identity/index.js';
import { listPatients } from '../patients/index.js';
import { createNote } from './service.js';

export async function seedNotes(app: FastifyInstance, state: SeedState): Promise<void> {
  const deps = app.atrium;
  const ctx = demoAdminContext(app, state, 'Riverside Clinic');
  const [eleanor] = (await listPatients(deps, ctx, { q: 'Eleanor Vance', limit: 1 })).items;
  if (!eleanor) return;
  await createNote(deps, demoMemberContext(app, state, 'Riverside Clinic', 'dr.lee@riverside.example'), {
    patientId: eleanor.id,
    subjective: 'Right knee pain for three weeks, worse on stairs. Blood pressure readings at home 150/95.',
    objective: 'BP 148/92. Right knee: mild effusion, full range of motion, no instability.',
    assessment: 'Essential hypertension, follow-up visit. Primary osteoarthritis of the right knee.',
    plan: 'Continue lisinopril 10 mg. Physical therapy twice a week for six weeks. Recheck in one month.',
  });
}
