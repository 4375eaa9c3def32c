// Demo inbox: Riverside Clinic has WhatsApp, Telegram, SMS, Messenger and Viber connected, with
// patients' messages from this week (some answered, some waiting), one contact linked to Eleanor Vance.
import type { FastifyInstance } from 'fastify';
import type { SeedState } from '../../platform/module.js';
import { demoAdminContext } from '../identity/index.js';
import { listPatients } from '../patients/index.js';
import type { InboundMessage } from './providers/index.js';
import { linkContact, seedConnection } from './service.js';

const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000);
let n = 0;
const message = (
  externalId: string,
  name: string | null,
  phone: string | null,
  text: string,
  minutesAgo: number,
  reply?: string,
): InboundMessage & { reply?: string } => ({
  kind: 'message',
  dedupKey: `demo-${++n}`,
  providerMessageId: `demo-in-${n}`,
  contact: { externalId, name, phone },
  text,
  attachments: [],
  at: ago(minutesAgo),
  ...(reply ? { reply } : {}),
});

export async function seedChannels(app: FastifyInstance, state: SeedState): Promise<void> {
  const ctx = demoAdminContext(app, state, 'Riverside Clinic');
  const deps = app.atrium;
  const whatsapp = await seedConnection(
    deps,
    ctx,
    {
      channel: 'whatsapp',
      name: 'Front desk WhatsApp',
      credentials: {
        appSecret: 'demo-whatsapp-app-secret',
        verifyToken: 'riverside-verify',
        accessToken: 'EAAGdemoaccesstoken',
        phoneNumberId: '109876543210',
      },
    },
    [
      message(
        '15035550142',
        'Eleanor Vance',
        '+15035550142',
        'Hi, this is Eleanor. Can I move Thursday’s PT session to the afternoon?',
        180,
        'Hi Eleanor, 3:30 pm on Thursday works. See you then!',
      ),
      message('15035550142', 'Eleanor Vance', '+15035550142', 'Perfect, thank you!', 150),
      message(
        '12065550177',
        'Jordan Reyes',
        '+12065550177',
        'Do I need to bring my insurance card to the first visit?',
        25,
      ),
    ],
  );
  await seedConnection(
    deps,
    ctx,
    {
      channel: 'telegram',
      name: 'Riverside bot',
      credentials: { botToken: '7000000001:AAdemoRiversideClinicBot', secretToken: 'riverside-telegram-secret' },
    },
    [message('412345678', 'Marcus Okafor', null, 'Is there parking near the clinic?', 42)],
  );
  await seedConnection(
    deps,
    ctx,
    {
      channel: 'sms',
      name: 'Main number (SMS)',
      credentials: {
        accountSid: `AC${'d'.repeat(32)}`,
        authToken: 'demo-twilio-auth-token',
        phoneNumber: '+15005550006',
      },
    },
    [message('+14155550199', null, '+14155550199', 'Running 10 minutes late for my 2pm, sorry!', 8)],
  );
  await seedConnection(
    deps,
    ctx,
    {
      channel: 'messenger',
      name: 'Riverside Clinic page',
      credentials: {
        appSecret: 'demo-messenger-app-secret',
        verifyToken: 'riverside-verify',
        accessToken: 'EAAGdemopagetoken',
        pageId: '2233445566',
      },
    },
    [
      message(
        '6011223344556677',
        'Priya N.',
        null,
        'Do you accept Aetna?',
        300,
        'Yes, we are in network with Aetna PPO and HMO plans.',
      ),
    ],
  );
  await seedConnection(
    deps,
    ctx,
    { channel: 'viber', name: 'Viber', credentials: { authToken: 'demo-viber-auth-token-0001' } },
    [message('01234567890A=', 'Tomas K.', null, 'Can I get a copy of my lab results?', 65)],
  );
  // Eleanor's WhatsApp is linked to her record: her thread shows on the patient page.
  const eleanor = (await listPatients(deps, ctx, { limit: 200 })).items.find((p) => p.mrn === 'RC-1001');
  const contact = whatsapp.contacts.get('15035550142');
  if (eleanor && contact) await linkContact(deps, ctx, contact, eleanor.id);
}
