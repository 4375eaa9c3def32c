import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { waitForMail } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../db/tenant.js';
import { emulatorTransport, enqueueMail, sendDueMail } from './mailer.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const transport = () => emulatorTransport(() => t.baseUrl);

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
    expect(await sendDueMail(t.database, transport(), 'Atrium <no-reply@atrium.local>')).toBe(1);
    const [mail] = await waitForMail(t, 'ops@example.test');
    expect(mail).toMatchObject({ subject: 'Invitation', to: ['ops@example.test'] });
    expect(mail.text.trim()).toBe('Hello');
    expect(mail.attachments[0]).toMatchObject({ filename: 'invite.ics' });
    expect(mail.attachments[0].contentType).toContain('text/calendar');
    expect(mail.attachments[0].content).toContain('BEGIN:VCALENDAR');
  });

  it('a rolled-back transaction sends nothing', async () => {
    await expect(
      withSystem(t.database.db, async (tx) => {
        await enqueueMail(tx, null, { to: ['ghost@example.test'], subject: 'x', text: 'x' });
        throw new Error('rollback');
      }),
    ).rejects.toThrow();
    await sendDueMail(t.database, transport(), 'a@b.c');
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
    await sendDueMail(t.database, transport(), 'a@b.c');
    const [row] = await withSystem(t.database.db, (tx) =>
      queryRows<{ status: string; attempts: number; last_error: string }>(
        tx,
        sql`SELECT status, attempts, last_error FROM mail_outbox WHERE subject = 'Retry me'`,
      ),
    );
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row.last_error).toContain('503');
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE mail_outbox SET next_attempt_at = now() WHERE subject = 'Retry me'`),
    );
    await sendDueMail(t.database, transport(), 'a@b.c');
    expect(await waitForMail(t, 'retry@example.test')).toHaveLength(1);
  });

  it('drops a result whose lease another worker has taken over', async () => {
    await withSystem(t.database.db, (tx) =>
      enqueueMail(tx, null, { to: ['fenced@example.test'], subject: 'Fenced', text: 'x' }),
    );
    const takeover = {
      async send() {
        // While this worker is still sending, its lease runs out and another worker claims the mail.
        await withSystem(t.database.db, (tx) =>
          tx.execute(sql`UPDATE mail_outbox SET locked_until = now() + interval '5 minutes' WHERE subject = 'Fenced'`),
        );
      },
    };
    await sendDueMail(t.database, takeover, 'a@b.c');
    const [row] = await withSystem(t.database.db, (tx) =>
      queryRows<{ status: string }>(tx, sql`SELECT status FROM mail_outbox WHERE subject = 'Fenced'`),
    );
    expect(row.status).toBe('pending');
  });
});
