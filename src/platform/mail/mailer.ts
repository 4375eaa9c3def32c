import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { z } from 'zod';
import type { Tx } from '../db/client.js';
import { backoffMs, type DeadJob, defineJob, enqueueJob } from '../jobs/jobs.js';
import type { AppDeps } from '../types.js';

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
  /**
   * After this instant (ISO) the mail is no use (the link it carries has expired): an attempt then drops it
   * instead of sending it, however long the relay was down.
   */
  notAfter?: string;
  html?: string;
  attachments?: MailAttachment[];
  /**
   * An iMIP part (RFC 6047), through nodemailer's icalEvent: a `text/calendar; method=…` alternative
   * and an `invite.ics` attachment (application/ics) — do not attach the same object again.
   */
  icalEvent?: { method: 'REQUEST' | 'CANCEL' | 'REPLY'; content: string };
}

export interface MailTransport {
  /** `messageId` (with its angle brackets): the same on every attempt of one queued mail. */
  send(from: string, mail: OutgoingMail, options?: { messageId?: string }): Promise<void>;
}

/**
 * A queued mail's Message-ID, from its job id and the sender's domain: every attempt sends the same one, so a
 * receiver (or relay) that already has a message (an attempt that timed out after delivery) can drop the copy
 * (RFC 5322 §3.6.4: one Message-ID per message, not per transmission).
 */
export function messageIdFor(jobId: string, from: string): string {
  const domain = /@([^\s<>@]+)>?\s*$/.exec(from)?.[1] ?? 'atrium.invalid';
  return `<${jobId}@${domain}>`;
}

const mailSchema = z.object({
  to: z.array(z.string()).min(1),
  subject: z.string(),
  text: z.string(),
  html: z.string().optional(),
  attachments: z.array(z.object({ filename: z.string(), contentType: z.string(), content: z.string() })).optional(),
  icalEvent: z.object({ method: z.enum(['REQUEST', 'CANCEL', 'REPLY']), content: z.string() }).optional(),
  notAfter: z.string().optional(),
});

/**
 * Queues mail in the caller's transaction (a `mail.send` job). The job worker sends it after commit, so a rolled-back
 * change never mails anyone and a committed one always does (retried for 3 days until the server accepts, then
 * dead-lettered to the workspace's inbox).
 */
export async function enqueueMail(tx: Tx, workspaceId: string | null, mail: OutgoingMail): Promise<string | null> {
  const to = [...new Set(mail.to.map((t) => t.trim()).filter(Boolean))];
  if (to.length === 0) return null;
  return enqueueJob(tx, sendMailJob, { ...mail, to }, { workspaceId });
}

/**
 * An SMTP relay's refusal as a log and a job's error may have it: the command, the reply code and the enhanced
 * status code (`SMTP relay answered 550 5.1.1 to RCPT TO (1 of 1 recipients refused)`). Never the relay's words
 * or nodemailer's `response`, `rejected` and `rejectedErrors`: they quote the recipient's address and often their
 * name (`550 5.1.1 <jane.doe@…>: mailbox of Jane Doe disabled`), and a failed job's error is logged and kept
 * (contract §1, convention 16).
 */
export class SmtpRelayError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly responseCode: number | undefined,
    readonly command: string | undefined,
  ) {
    super(message);
    this.name = 'SmtpRelayError';
  }
}

interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  command?: string;
  response?: string;
  rejected?: unknown[];
}

/** nodemailer's error, minus what the relay said: errors without a reply (a refused connection) are its own words. */
function relayError(err: unknown, recipients: number): unknown {
  const e = err as NodemailerError;
  if (!(err instanceof Error) || (e.responseCode === undefined && e.response === undefined)) return err;
  const enhanced = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(e.response ?? '')?.[1];
  const reply = [e.responseCode, enhanced].filter(Boolean).join(' ') || 'an error';
  const refused =
    Array.isArray(e.rejected) && e.rejected.length > 0
      ? ` (${e.rejected.length} of ${recipients} recipients refused)`
      : '';
  return new SmtpRelayError(
    `SMTP relay answered ${reply} to ${e.command ?? 'the message'}${refused}`,
    e.code,
    e.responseCode,
    e.command,
  );
}

/** SMTP through nodemailer (SMTP_URL). */
export function smtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport(url);
  return {
    async send(from, mail, options) {
      try {
        await transporter.sendMail({ from, ...mail, messageId: options?.messageId });
      } catch (err) {
        throw relayError(err, mail.to.length);
      }
    },
  };
}

/** Builds the real RFC 5322 message and hands it to the mail emulator over HTTP (no SMTP configured). */
export function emulatorTransport(baseUrl: () => string): MailTransport {
  return {
    async send(from, mail, options) {
      const raw = await new MailComposer({ from, ...mail, messageId: options?.messageId }).compile().build();
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

/** Chooses how mail leaves this instance: SMTP_URL, else the mail emulator; undefined when neither. */
export function mailTransportFor(deps: Pick<AppDeps, 'config' | 'selfUrl'>): MailTransport | undefined {
  const cached = transports.get(deps);
  if (cached) return cached;
  const { config } = deps;
  const transport = config.smtpUrl
    ? smtpTransport(config.smtpUrl)
    : config.emulators
      ? emulatorTransport(() => deps.selfUrl())
      : undefined;
  if (transport) transports.set(deps, transport);
  return transport;
}
const transports = new WeakMap<object, MailTransport>();

/** Retry spacing of queued mail: 10 s doubling to at most 30 minutes, as mail servers space theirs. */
export const MAIL_BACKOFF = { baseMs: 10_000, maxMs: 30 * 60_000 };
/** How long a queued mail is retried before it is given up (Postfix keeps 5 days; a reset link outlives nothing). */
export const MAIL_RETRY_WINDOW_MS = 3 * 24 * 60 * 60_000;

/** The attempts whose start falls within the retry window. */
function attemptsWithin(windowMs: number): number {
  let attempts = 1;
  let waited = 0;
  while (waited + backoffMs(MAIL_BACKOFF, attempts) <= windowMs) waited += backoffMs(MAIL_BACKOFF, attempts++);
  return attempts;
}

/**
 * Where mail that could not be delivered is reported: the workspace's inbox. Platform code imports no module,
 * so the module that owns the inbox registers it (its `postInboxNotice` fits).
 */
export type MailDeadLetterInbox = (
  tx: Tx,
  workspaceId: string,
  notice: { kind: string; eventType: string; message: string },
) => Promise<void>;
let deadLetterInbox: MailDeadLetterInbox | undefined;

/** Registers where undeliverable mail of a workspace is reported (undefined: nowhere, tests). */
export function registerMailDeadLetterInbox(inbox: MailDeadLetterInbox | undefined): void {
  deadLetterInbox = inbox;
}

/**
 * A mail given up after the retry window: a notice in its workspace's inbox, in the transaction that marks the
 * job dead (a platform mail, e.g. a password reset, has no workspace: the worker's error log and the dead job
 * row, kept 30 days with the message, are its record). The notice names no subject or address (they may name
 * a patient), only the job, its recipients' count and the last error.
 */
async function deadLetterMail(tx: Tx, dead: DeadJob): Promise<void> {
  if (!dead.workspaceId || !deadLetterInbox) return;
  const parsed = mailSchema.safeParse(dead.payload);
  const recipients = parsed.success ? parsed.data.to.length : 0;
  await deadLetterInbox(tx, dead.workspaceId, {
    kind: 'mail.undeliverable',
    eventType: 'mail.send',
    message:
      `A mail to ${recipients} recipient${recipients === 1 ? '' : 's'} (job ${dead.id}) could not be delivered ` +
      `after ${dead.attempts} attempts: ${dead.error.slice(0, 300)}`,
  });
}

/**
 * Sends one queued mail (a job of platform/jobs: claimed with SKIP LOCKED, retried with backoff for 3 days,
 * then dead-lettered). The job worker runs it only where a transport exists.
 */
export const sendMailJob = defineJob({
  type: 'mail.send',
  schema: mailSchema,
  maxAttempts: attemptsWithin(MAIL_RETRY_WINDOW_MS),
  backoff: MAIL_BACKOFF,
  leaseMs: 2 * 60_000,
  async handler(ctx, mail) {
    const transport = mailTransportFor(ctx.deps);
    if (!transport) throw new Error('No SMTP_URL and emulators are off: no way to send mail');
    const { notAfter, ...message } = mail;
    if (notAfter && Date.now() > Date.parse(notAfter)) {
      // A password reset or invitation whose link has expired while the relay was down: sending it would
      // only hand someone a dead link.
      ctx.log.warn({ notAfter }, 'mail dropped unsent: its link expired before the relay took it');
      return;
    }
    const from = ctx.deps.config.mailFrom;
    await transport.send(from, message, { messageId: messageIdFor(ctx.jobId, from) });
  },
  onDead: deadLetterMail,
});
