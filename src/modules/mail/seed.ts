// Demo mail: what a clinic's inbound address receives in a week (a lab result, a referral, and a
// piece of spam that the installed spam filter labels once the job worker runs).
import type { FastifyInstance } from 'fastify';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { SeedState } from '../../platform/module.js';
import { demoTenancy } from '../identity/index.js';
import { addressOf, receiveMail } from './service.js';

const DEMO_MAIL = [
  {
    from: 'Quest Diagnostics <results@lab.example>',
    subject: 'Lab results ready: Eleanor Vance (CBC, lipid panel)',
    text: 'The results ordered on Monday are ready in the portal. All values are within reference ranges except LDL 142 mg/dL (high).',
  },
  {
    from: 'Dr. Amara Okafor <a.okafor@orthopedics.example>',
    subject: 'Referral: Marcus Diaz, post-operative physical therapy',
    text: 'Please schedule Mr. Diaz for physical therapy twice a week for six weeks following his ACL reconstruction. Operative note attached to follow by fax.',
  },
  {
    from: 'Prize Center <winner@prizes.example>',
    subject: 'You WON a free gift card!!!',
    text: 'Congratulations! Claim your free gift card prize now, click here to claim your reward, limited time offer!!!',
  },
];

export async function seedMail(app: FastifyInstance, state: SeedState): Promise<void> {
  const clinic = demoTenancy(state).workspaces['Riverside Clinic'];
  const to = addressOf(app.atrium, clinic.id);
  for (const mail of DEMO_MAIL) {
    const raw = await new MailComposer({ ...mail, to }).compile().build();
    await receiveMail(app.atrium, raw, 'seed');
  }
}
