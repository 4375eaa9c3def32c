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

/** SMTP through nodemailer (SMTP_URL). */
export function smtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport(url);
  return {
    async send(from, mail, options) {
      await transporter.sendMail({ from, ...mail, messageId: options?.messageId });
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
