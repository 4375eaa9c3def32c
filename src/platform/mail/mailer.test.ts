import { sql } from 'drizzle-orm';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { waitForMail } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../db/tenant.js';
import { runDueJobs } from '../jobs/runner.js';
import { enqueueMail, sendMailJob } from './mailer.js';

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
});
