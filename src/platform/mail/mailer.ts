import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { Database, Tx } from '../db/client.js';
import { queryRows, withSystem } from '../db/tenant.js';
import { newId } from '../ids.js';
import { mailOutbox } from '../platform-tables.js';
import { startPollingWorker, type Worker } from '../worker.js';

export interface MailAttachment {
  filename: string;
  contentType: string;
  /** UTF-8 text (e.g. text/calendar) — the common case for our attachments. */
  content: string;
}

export interface OutgoingMail {
  to: string[];
  subject: string;
  text: string;
  html?: string;
  attachments?: MailAttachment[];
}

export interface MailTransport {
  send(from: string, mail: OutgoingMail): Promise<void>;
}

export const MAIL_CHANNEL = 'atrium_mail';
const MAX_ATTEMPTS = 10;

/**
 * Queues mail in the caller's transaction. The mail worker sends it after commit, so a rolled-back
 * change never mails anyone and a committed one always does (retried until the server accepts).
 */
export async function enqueueMail(tx: Tx, workspaceId: string | null, mail: OutgoingMail): Promise<string> {
  const id = newId('mail');
  const to = [...new Set(mail.to.map((t) => t.trim()).filter(Boolean))];
  if (to.length === 0) return id;
  await tx.insert(mailOutbox).values({
    id,
    workspaceId,
    to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html ?? null,
    attachments: mail.attachments ?? [],
  });
  await tx.execute(sql`SELECT pg_notify(${MAIL_CHANNEL}, ${id})`);
  return id;
}

/** SMTP through nodemailer (SMTP_URL). */
export function smtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport(url);
  return {
    async send(from, mail) {
      await transporter.sendMail({ from, ...mail });
    },
  };
}

/** Builds the real RFC 5322 message and hands it to the mail emulator over HTTP (no SMTP configured). */
export function emulatorTransport(baseUrl: () => string): MailTransport {
  return {
    async send(from, mail) {
      const raw = await new MailComposer({ from, ...mail }).compile().build();
      const res = await fetch(`${baseUrl()}/_emulators/mail/messages`, {
        method: 'POST',
        headers: { 'content-type': 'message/rfc822' },
        body: new Uint8Array(raw),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`mail emulator answered ${res.status}`);
    },
  };
}

interface ClaimedMail {
  id: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  attachments: MailAttachment[];
  attempts: number;
  /** The lease this worker holds; results are written only while it still holds it. */
  lease: string;
}

/**
 * Claims due mail (SKIP LOCKED, so several instances share the work) and sends it outside any
 * transaction, in parallel so one slow recipient server does not hold back the rest.
 */
export async function sendDueMail(database: Database, transport: MailTransport, from: string): Promise<number> {
  const claimed = await withSystem(database.db, async (tx) => {
    return queryRows<ClaimedMail>(
      tx,
      sql`
      UPDATE mail_outbox SET locked_until = now() + interval '2 minutes', attempts = attempts + 1
       WHERE id IN (SELECT id FROM mail_outbox
                     WHERE status = 'pending' AND next_attempt_at <= now()
                       AND (locked_until IS NULL OR locked_until < now())
                     ORDER BY next_attempt_at LIMIT 20 FOR UPDATE SKIP LOCKED)
      RETURNING id, "to", subject, text, html, attachments, attempts, locked_until::text AS lease`,
    );
  });
  await Promise.all(claimed.map((mail) => sendOne(database, transport, from, mail)));
  return claimed.length;
}

async function sendOne(database: Database, transport: MailTransport, from: string, mail: ClaimedMail): Promise<void> {
  // Fenced by the lease: if it ran out and another worker took the mail over, this result is dropped.
  const stillOurs = sql`id = ${mail.id} AND locked_until = ${mail.lease}::timestamptz`;
  try {
    await transport.send(from, {
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html ?? undefined,
      attachments: mail.attachments,
    });
    await withSystem(database.db, (tx) =>
      tx.execute(sql`UPDATE mail_outbox SET status = 'sent', sent_at = now(), locked_until = NULL WHERE ${stillOurs}`),
    );
  } catch (err) {
    const failed = mail.attempts >= MAX_ATTEMPTS;
    const backoffSec = Math.min(3600, 5 * 2 ** mail.attempts);
    await withSystem(database.db, (tx) =>
      tx.execute(sql`
        UPDATE mail_outbox SET status = ${failed ? 'failed' : 'pending'}, locked_until = NULL,
               last_error = ${String((err as Error).message).slice(0, 500)},
               next_attempt_at = now() + make_interval(secs => ${backoffSec})
         WHERE ${stillOurs}`),
    );
  }
}

export function startMailWorker(
  database: Database,
  transport: MailTransport,
  from: string,
  log: FastifyBaseLogger,
  pollMs: number,
): Promise<Worker> {
  return startPollingWorker({
    name: 'mail',
    database,
    log,
    pollMs,
    channel: MAIL_CHANNEL,
    runOnce: () => sendDueMail(database, transport, from),
  });
}
