// Demo staff messaging at Riverside Clinic: Avery (the demo admin) and Dr. Lee talk about a patient
// (a mention, so the message shows on her record), and the front-desk group has news from this
// morning, the newest of it not yet read by Avery.
import type { FastifyInstance } from 'fastify';
import type { SeedState } from '../../platform/module.js';
import { demoAdminContext, demoMemberContext } from '../identity/index.js';
import { listPatients } from '../patients/index.js';
import { send } from './service.js';

export async function seedDirectMessages(app: FastifyInstance, state: SeedState): Promise<void> {
  const deps = app.atrium;
  const avery = demoAdminContext(app, state, 'Riverside Clinic');
  const lee = demoMemberContext(app, state, 'Riverside Clinic', 'dr.lee@riverside.example');
  const sam = demoMemberContext(app, state, 'Riverside Clinic', 'sam@riverside.example');
  const eleanor = (await listPatients(deps, avery, { limit: 200 })).items.find((p) => p.mrn === 'RC-1001');
  const her = eleanor ? `@patient:${eleanor.id}` : 'Eleanor Vance';

  const direct = await send(deps, avery, {
    recipients: [lee.userId],
    body: `Morning! ${her} asked on WhatsApp to move Thursday's PT session to the afternoon. Is 3:30 pm all right?`,
  });
  await send(deps, lee, {
    threadId: direct.threadId,
    body: '3:30 works. Please send her the updated home exercise sheet as well.',
  });
  await send(deps, avery, { threadId: direct.threadId, body: 'Done, she confirmed on WhatsApp.' });

  const desk = await send(deps, sam, {
    recipients: [avery.userId, lee.userId],
    title: 'Front desk',
    body: 'Heads-up: the card reader at reception is offline until noon. Take payments from the patient record.',
  });
  await send(deps, avery, { threadId: desk.threadId, body: 'Thanks Sam, I will tell the morning patients.' });
  await send(deps, lee, {
    threadId: desk.threadId,
    body: 'I am running about 10 minutes late for the 2 pm. Could someone let them know?',
  });
  await send(deps, sam, { threadId: desk.threadId, body: 'On it. I will call them now.' });
}
