// Inbound mail and the iMIP round trip: REQUEST out through the mail queue, the guest's REPLY back
// through POST /mail/inbound, their answer on the event; refusals store nothing.
import { sql } from 'drizzle-orm';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { runDueJobs } from '../../platform/jobs/index.js';
import { sendMailJob } from '../../platform/mail/mailer.js';
import { classifyMailJob } from './service.js';

let t: TestApp;
let ws: TestWorkspace;
let address: string;

const inbound = (raw: Buffer | string, token: string | undefined = t.config.operatorToken) =>
  t.request({
    method: 'POST',
    url: '/api/v1/mail/inbound',
    headers: { 'content-type': 'message/rfc822', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: raw,
  });

const compose = async (mail: Record<string, unknown>) => Buffer.from(await new MailComposer(mail).compile().build());

const stored = () =>
  withSystem(t.app.atrium.db, (tx) =>
    queryRows<{ id: string }>(tx, sql`SELECT id FROM mail_messages WHERE workspace_id = ${ws.id}`),
  );

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  address = (await t.request({ method: 'GET', url: '/api/v1/mail/address', token: ws.admin.token })).json().address;
});
afterAll(async () => t?.close());

describe('inbound mail', () => {
  it('answers the workspace address, stores a message and emits mail.received', async () => {
    expect(address).toBe(`${ws.id}@inbound.atrium.local`);
    const res = await inbound(
      await compose({ from: 'lab@example.test', to: address, subject: 'Results ready', text: 'Please call.' }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      workspaceId: ws.id,
      from: 'lab@example.test',
      subject: 'Results ready',
      replyMatched: false,
    });
    const list = await t.request({ method: 'GET', url: '/api/v1/mail/messages', token: ws.admin.token });
    expect(list.json().items[0]).toMatchObject({ id: res.json().id, text: expect.stringContaining('Please call.') });
    const events = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ data: { messageId: string } }>(
        tx,
        sql`SELECT data FROM domain_events WHERE workspace_id = ${ws.id} AND type = 'mail.received'`,
      ),
    );
    expect(events.map((e) => e.data.messageId)).toContain(res.json().id);
  });

  it('labels spam with the installed spam skill through the dispatcher (audited), and only where it is installed', async () => {
    const classify = () => runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [classifyMailJob] });
    const junk = {
      from: 'promo@prizes.example',
      to: address,
      subject: 'You WON',
      text: 'Congratulations! Claim your free gift card prize now, click here!!!',
    };
    // Without the skill: the message stays unlabelled and nothing is audited.
    const before = await inbound(await compose(junk));
    await classify();
    const unlabelled = await t.request({
      method: 'GET',
      url: `/api/v1/mail/messages/${before.json().id}`,
      token: ws.admin.token,
    });
    expect(unlabelled.json().spam).toBeNull();
    const audits = async () =>
      (await t.request({ method: 'GET', url: '/api/v1/audit?kind=skill_invocation', token: ws.admin.token })).json()
        .items as { slug: string; via: string; outcome: string }[];
    expect((await audits()).filter((a) => a.via === 'mail')).toEqual([]);

    const installed = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/install',
      token: ws.admin.token,
      payload: { slug: 'mail-spam-filter', scopes: ['mail:read'] },
    });
    expect(installed.statusCode, installed.body).toBeLessThan(300);
    const spam = await inbound(await compose(junk));
    const ham = await inbound(
      await compose({
        from: 'dr.okafor@referrals.example',
        to: address,
        subject: 'Referral for Mr. Diaz',
        text: 'Can you move the patient follow-up appointment to Thursday afternoon?',
      }),
    );
    await classify();
    const list = (await t.request({ method: 'GET', url: '/api/v1/mail/messages', token: ws.admin.token })).json()
      .items as { id: string; spam: { label: string; probability: number } | null }[];
    const byId = new Map(list.map((m) => [m.id, m.spam]));
    expect(byId.get(spam.json().id)).toMatchObject({ label: 'spam' });
    expect(byId.get(spam.json().id)!.probability).toBeGreaterThan(0.9);
    expect(byId.get(ham.json().id)).toMatchObject({ label: 'ham' });
    const viaMail = (await audits()).filter((a) => a.via === 'mail');
    expect(viaMail).toHaveLength(2);
    expect(viaMail.every((a) => a.slug === 'mail-spam-filter' && a.outcome === 'ok')).toBe(true);
  });

  it('stores mail carrying NUL bytes or control characters without them (it used to be a 500 the relay retried forever)', async () => {
    const header = (subject: string, body: string, encoding = '8bit') =>
      Buffer.from(
        `From: a@example.test\r\nTo: ${address}\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\n` +
          `Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n${body}\r\n`,
        'utf8',
      );
    for (const raw of [
      header('Referral\u0000 for Zelda', 'Patient Zelda\u0000 Quartermaine\u0007.'),
      header('=?UTF-8?B?YQBi?=', 'plain'),
      header('qp', 'x=00y', 'quoted-printable'),
    ]) {
      const res = await inbound(raw);
      expect(res.statusCode, res.body).toBe(201);
      const mail = (
        await t.request({ method: 'GET', url: `/api/v1/mail/messages/${res.json().id}`, token: ws.admin.token })
      ).json();
      const controls = [...`${mail.subject}${mail.text}`].filter((ch) => {
        const c = ch.codePointAt(0) ?? 0;
        return (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f;
      });
      expect(controls).toEqual([]);
    }
  });

  it('refuses without the credential, malformed, unknown recipients and oversize, storing nothing', async () => {
    const before = (await stored()).length;
    const ok = await compose({ from: 'a@example.test', to: address, subject: 's', text: 't' });
    expect((await inbound(ok, '')).statusCode).toBe(401);
    expect((await inbound(ok, 'wrong-token-wrong-token')).statusCode).toBe(401);
    expect((await inbound('')).statusCode).toBeGreaterThanOrEqual(400);
    const nobody = await inbound(
      await compose({ from: 'a@example.test', to: 'someone@example.test', subject: 's', text: 't' }),
    );
    expect([nobody.statusCode, nobody.json().code]).toEqual([422, 'unknown_recipient']);
    const forged = await inbound(
      await compose({
        from: 'a@example.test',
        to: 'ws_00000000000000000000000000@inbound.atrium.local',
        subject: 's',
        text: 't',
      }),
    );
    expect(forged.json().code).toBe('unknown_recipient');
    const huge = await inbound(Buffer.alloc(26 * 1024 * 1024, 97));
    expect(huge.statusCode).toBe(413);
    expect((await stored()).length).toBe(before);
  });

  it("round trip: the guest's iMIP REPLY from their mail client marks them accepted on the event", async () => {
    const calendar = (await connectCalendar(t, ws.admin.token, 'google', `mail-${ws.id}@google.example`)).calendarId;
    const ann = `ann-${ws.id}@example.test`;
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: {
        calendar,
        draft: {
          title: 'Consult',
          start: '2026-12-10T15:00:00Z',
          end: '2026-12-10T16:00:00Z',
          attendees: [{ email: ann }],
        },
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    await runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [sendMailJob] });
    const sent = (await (await fetch(`${t.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(ann)}`)).json())
      .items[0];
    const ics: string = sent.attachments.find((a: { filename: string }) => a.filename === 'invite.ics').content;
    const invite = Buffer.from(ics, 'base64').toString('utf8');
    expect(invite).toContain(`ORGANIZER`);
    expect(invite.replace(/\r?\n /g, '')).toContain(`mailto:${address}`);

    const uid = /^UID:(.*)$/m.exec(invite.replace(/\r?\n /g, ''))![1].trim();
    const replyIcs = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//Example Mail//EN',
      'METHOD:REPLY',
      'BEGIN:VEVENT',
      `UID:${uid}`,
      'DTSTAMP:20261125T100000Z',
      `ATTENDEE;PARTSTAT=ACCEPTED:mailto:${ann}`,
      `ORGANIZER:mailto:${address}`,
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    // Someone else cannot answer for Ann.
    const spoof = await inbound(
      await compose({
        from: 'mallory@example.test',
        to: address,
        subject: 'Accepted: Consult',
        text: 'yes',
        icalEvent: { method: 'REPLY', content: replyIcs },
      }),
    );
    expect(spoof.json().replyMatched).toBe(false);
    const reply = await inbound(
      await compose({
        from: ann,
        to: address,
        subject: 'Accepted: Consult',
        text: 'See you then',
        icalEvent: { method: 'REPLY', content: replyIcs },
      }),
    );
    expect(reply.statusCode, reply.body).toBe(201);
    expect(reply.json()).toMatchObject({ calendarMethod: 'REPLY', replyMatched: true });

    const events = await t.request({
      method: 'GET',
      url: '/api/v1/calendar/events?timeMin=2026-12-10T00:00:00Z&timeMax=2026-12-11T00:00:00Z',
      token: ws.admin.token,
    });
    const event = events.json().items.find((e: { id: string }) => e.id === made.json().eventId);
    expect(event.attendees).toEqual([expect.objectContaining({ email: ann, responseStatus: 'accepted' })]);
  });
});

describe('the inbound domain (ATRIUM_INBOUND_MAIL_DOMAIN)', () => {
  it('is the domain of the address, of mail taken in and of the invitations’ ORGANIZER; the default is refused there', async () => {
    const own = await createTestApp({ inboundMailDomain: 'inbound.riverside.example' });
    try {
      const clinic = await createWorkspace(own, { tier: 'standard' });
      const res = await own.request({ method: 'GET', url: '/api/v1/mail/address', token: clinic.admin.token });
      expect(res.json().address).toBe(`${clinic.id}@inbound.riverside.example`);
      const post = async (to: string) =>
        own.request({
          method: 'POST',
          url: '/api/v1/mail/inbound',
          headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${own.config.operatorToken}` },
          payload: await compose({ from: 'lab@example.test', to, subject: 'Results', text: 'In range.' }),
        });
      // Mail clients may write the domain in capitals.
      expect((await post(`${clinic.id}@Inbound.Riverside.Example`)).statusCode).toBe(201);
      const elsewhere = await post(`${clinic.id}@inbound.atrium.local`);
      expect(elsewhere.statusCode).toBe(422);
      expect(elsewhere.json().code).toBe('unknown_recipient');

      const calendar = (await connectCalendar(own, clinic.admin.token, 'google', `mail-${clinic.id}@google.example`))
        .calendarId;
      const made = await own.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: clinic.admin.token,
        payload: {
          calendar,
          draft: {
            title: 'Consult',
            start: '2026-12-10T15:00:00Z',
            end: '2026-12-10T16:00:00Z',
            attendees: [{ email: 'bea@example.test' }],
          },
        },
      });
      expect(made.statusCode, made.body).toBe(201);
      await runDueJobs({ deps: own.app.atrium, log: own.app.log, jobs: [sendMailJob] });
      const sent = (
        await (
          await fetch(`${own.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent('bea@example.test')}`)
        ).json()
      ).items[0];
      const ics: string = sent.attachments.find((a: { filename: string }) => a.filename === 'invite.ics').content;
      const invite = Buffer.from(ics, 'base64')
        .toString('utf8')
        .replace(/\r?\n /g, '');
      expect(invite).toMatch(
        new RegExp(`^ORGANIZER;[^\\r\\n]*mailto:${clinic.id}@inbound\\.riverside\\.example\\r?$`, 'm'),
      );
    } finally {
      await own.close();
    }
  });
});
