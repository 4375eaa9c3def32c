import { sql } from 'drizzle-orm';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createWorkspace, waitForMail } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../db/tenant.js';
import { backoffMs } from '../jobs/jobs.js';
import { runDueJobs } from '../jobs/runner.js';
import { enqueueMail, MAIL_BACKOFF, messageIdFor, sendMailJob } from './mailer.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

/** One pass of the job worker over mail jobs (mail goes to the mail emulator, as configured in tests). */
const sendDueMail = () => runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [sendMailJob] });

describe('outgoing mail', () => {
  it('is sent after commit through the mail emulator as a real MIME message, attachments included', async () => {
    await withSystem(t.database.db, (tx) =>
      enqueueMail(tx, null, {
        to: ['ops@example.test'],
        subject: 'Invitation',
        text: 'Hello',
        attachments: [
          {
            filename: 'invite.ics',
            contentType: 'text/calendar; method=REQUEST',
            content: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n',
          },
        ],
      }),
    );
    expect(await sendDueMail()).toBe(1);
    const [mail] = await waitForMail(t, 'ops@example.test');
    expect(mail).toMatchObject({ subject: 'Invitation', to: ['ops@example.test'] });
    expect(mail.text.trim()).toBe('Hello');
    expect(mail.attachments[0]).toMatchObject({ filename: 'invite.ics' });
    expect(mail.attachments[0].contentType).toContain('text/calendar');
    // The mailbox lists attachment content as base64 (contract §11); a text part's line breaks are the decoder's.
    const { content } = mail.attachments[0];
    expect(content).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(content, 'base64').toString('utf8').replace(/\r\n/g, '\n')).toBe(
      'BEGIN:VCALENDAR\nEND:VCALENDAR\n',
    );
  });

  it('the mail emulator lists attachments as base64, so binary content comes back byte for byte', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28]);
    const raw = await new MailComposer({
      from: 'lab@example.test',
      to: 'binary@example.test',
      subject: 'Scan',
      text: 'Attached.',
      attachments: [{ filename: 'scan.png', contentType: 'image/png', content: bytes }],
    })
      .compile()
      .build();
    const posted = await fetch(`${t.baseUrl}/_emulators/mail/messages`, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: new Uint8Array(raw),
    });
    expect(posted.status).toBe(202);
    const [mail] = await waitForMail(t, 'binary@example.test');
    expect(mail.attachments).toEqual([
      { filename: 'scan.png', contentType: 'image/png', content: bytes.toString('base64') },
    ]);
  });

  it('a rolled-back transaction sends nothing', async () => {
    await expect(
      withSystem(t.database.db, async (tx) => {
        await enqueueMail(tx, null, { to: ['ghost@example.test'], subject: 'x', text: 'x' });
        throw new Error('rollback');
      }),
    ).rejects.toThrow();
    await sendDueMail();
    expect(await waitForMail(t, 'ghost@example.test', 1, 300)).toEqual([]);
  });

  it('keeps mail queued while the server fails and delivers it later', async () => {
    await fetch(`${t.baseUrl}/_emulators/mail/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'send', status: 503 }),
    });
    await withSystem(t.database.db, (tx) =>
      enqueueMail(tx, null, { to: ['retry@example.test'], subject: 'Retry me', text: 'x' }),
    );
    await sendDueMail();
    const [row] = await withSystem(t.database.db, (tx) =>
      queryRows<{ status: string; attempts: number; last_error: string }>(
        tx,
        sql`SELECT status, attempts, last_error FROM jobs WHERE type = 'mail.send' AND payload->>'subject' = 'Retry me'`,
      ),
    );
    expect(row).toMatchObject({ status: 'queued', attempts: 1 });
    expect(row.last_error).toContain('503');
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE jobs SET run_at = now() WHERE payload->>'subject' = 'Retry me'`),
    );
    await sendDueMail();
    expect(await waitForMail(t, 'retry@example.test')).toHaveLength(1);
  });

  it('is retried for 3 days (an outage of hours loses nothing), at most 30 minutes apart', () => {
    const waits = Array.from({ length: sendMailJob.maxAttempts - 1 }, (_, i) => backoffMs(sendMailJob.backoff, i + 1));
    const hours = waits.reduce((a, b) => a + b, 0) / 3_600_000;
    // The last attempt starts just before 72 h; it used to be the tenth, 85 minutes in.
    expect(hours).toBeGreaterThan(71);
    expect(hours).toBeLessThanOrEqual(72);
    expect(Math.max(...waits)).toBe(MAIL_BACKOFF.maxMs);
  });

  it('a mail given up is dead-lettered to its workspace inbox, naming the job but not the subject', async () => {
    // The inbox is the webhooks module's: it registers itself when the app is built.
    const ws = await createWorkspace(t, { tier: 'advanced' });
    const jobId = await withSystem(t.database.db, (tx) =>
      enqueueMail(tx, ws.id, { to: ['gone@example.test', 'also@example.test'], subject: 'Mrs Smith', text: 'x' }),
    );
    await fetch(`${t.baseUrl}/_emulators/mail/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'send', status: 503, times: 10 }),
    });
    try {
      // The last attempt of the window.
      await withSystem(t.database.db, (tx) =>
        tx.execute(sql`UPDATE jobs SET attempts = max_attempts - 1 WHERE id = ${jobId}`),
      );
      await sendDueMail();
      const [row] = await withSystem(t.database.db, (tx) =>
        queryRows<{ status: string }>(tx, sql`SELECT status FROM jobs WHERE id = ${jobId}`),
      );
      expect(row.status).toBe('dead');
      const inbox = await t.request({ method: 'GET', url: '/api/v1/inbox', token: ws.admin.token });
      expect(inbox.statusCode, inbox.body).toBe(200);
      const notices = (inbox.json().items as { kind: string; eventType: string; lastError: string }[]).filter(
        (i) => i.kind === 'mail.undeliverable',
      );
      expect(notices).toHaveLength(1);
      expect(notices[0].eventType).toBe('mail.send');
      expect(notices[0].lastError).toContain(jobId);
      expect(notices[0].lastError).toContain('2 recipients');
      expect(notices[0].lastError).toContain('503');
      expect(notices[0].lastError).not.toContain('Smith');
      expect(notices[0].lastError).not.toContain('gone@example.test');
    } finally {
      await fetch(`${t.baseUrl}/_emulators/mail/faults`, { method: 'DELETE' });
    }
  });

  it('a mail whose link expired while the relay was down is dropped, not sent', async () => {
    const stamp = Date.now();
    await withSystem(t.database.db, (tx) =>
      enqueueMail(tx, null, {
        to: [`late-${stamp}@example.test`],
        subject: 'Reset your Atrium password',
        text: 'link',
        notAfter: new Date(stamp - 1000).toISOString(),
      }),
    );
    await withSystem(t.database.db, (tx) =>
      enqueueMail(tx, null, {
        to: [`soon-${stamp}@example.test`],
        subject: 'Reset your Atrium password',
        text: 'link',
        notAfter: new Date(stamp + 3_600_000).toISOString(),
      }),
    );
    await sendDueMail();
    const sentTo = async (to: string) =>
      (
        (await (await fetch(`${t.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(to)}`)).json()) as {
          items: unknown[];
        }
      ).items.length;
    expect(await sentTo(`soon-${stamp}@example.test`)).toBe(1);
    expect(await sentTo(`late-${stamp}@example.test`)).toBe(0);
  });

  it('every attempt of a queued mail carries one Message-ID, made from its job id', async () => {
    expect(messageIdFor('job_1', 'Atrium <no-reply@atrium.example>')).toBe('<job_1@atrium.example>');
    expect(messageIdFor('job_1', 'no-reply@atrium.example')).toBe('<job_1@atrium.example>');
    expect(messageIdFor('job_1', 'Atrium')).toBe('<job_1@atrium.invalid>');
    const jobId = await withSystem(t.database.db, (tx) =>
      enqueueMail(tx, null, { to: ['twice@example.test'], subject: 'Invitation', text: 'x' }),
    );
    await sendDueMail();
    // As when the server took the message but the answer timed out: the job runs again and sends it again.
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE jobs SET status = 'queued', run_at = now() WHERE id = ${jobId}`),
    );
    await sendDueMail();
    expect(await waitForMail(t, 'twice@example.test', 2)).toHaveLength(2);
    const sent = await withSystem(t.database.db, (tx) =>
      queryRows<{ raw: string }>(
        tx,
        sql`SELECT raw FROM emulator_mail WHERE "to" @> ${JSON.stringify(['twice@example.test'])}::jsonb`,
      ),
    );
    const ids = sent.map((m) => /^Message-ID: (.*)$/im.exec(m.raw)?.[1].trim());
    const domain = t.app.atrium.config.mailFrom.split('@').pop()?.replace('>', '').trim();
    expect(ids).toEqual([`<${jobId}@${domain}>`, `<${jobId}@${domain}>`]);
  });
});
