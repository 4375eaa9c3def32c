// Inbound mail (contract §5.3): one raw RFC 5322 message per request, parsed with postal-mime; the
// workspace comes from the recipient address; every accepted message is stored and emits
// mail.received; an iMIP REPLY (RFC 6047) updates the guest's answer on the calendar event. When
// the workspace has the spam skill installed, a background job labels the message through the
// skills dispatcher (audited as a skill_invocation, via `mail`).
import { and, desc, eq, lt } from 'drizzle-orm';
import ICAL from 'ical.js';
import PostalMime from 'postal-mime';
import { z } from 'zod';
import type { RequestContext } from '../../platform/context.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { defineJob, enqueueJob } from '../../platform/jobs/index.js';
import { inboundAddress, workspaceOfAddress } from '../../platform/mail/inbound-address.js';
import { decodeCursor, toPage } from '../../platform/pagination.js';
import { storableText } from '../../platform/text.js';
import type { AppDeps } from '../../platform/types.js';
import { fromFloating, isTimeZone } from '../../platform/zoned-time.js';
import { recordInvitationReply } from '../calendar/index.js';
import { workspaceExists } from '../identity/index.js';
import { invokeIfInstalled } from '../skills/index.js';
import { mailMessages } from './tables.js';

/** The address this workspace receives mail at (GET /mail/address; the ORGANIZER of its invitations). */
export const addressOf = (deps: Pick<AppDeps, 'config'>, workspaceId: string) =>
  inboundAddress(deps.config.inboundMailDomain, workspaceId);

/** The acceptance source of POST /mail/inbound (`mail:acceptance-rate`). */
export const INBOUND_SOURCE = 'mail:inbound';

export interface MailMessage {
  id: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
  calendarMethod: string | null;
  /** The spam skill's verdict, or null (skill not installed, or not classified yet). */
  spam: { label: 'spam' | 'ham'; probability: number } | null;
  receivedAt: string;
}

type Row = typeof mailMessages.$inferSelect;
const present = (r: Row): MailMessage => ({
  id: r.id,
  from: r.from,
  to: r.to,
  subject: r.subject,
  text: r.text,
  calendarMethod: r.calendarMethod,
  spam:
    r.spamLabel === 'spam' || r.spamLabel === 'ham'
      ? { label: r.spamLabel, probability: Math.round((r.spamProbability ?? 0) * 1000) / 1000 }
      : null,
  receivedAt: r.receivedAt.toISOString(),
});

export const SPAM_SKILL = { slug: 'mail-spam-filter', tool: 'classify_message' } as const;

/**
 * Labels one received message with the spam skill, if the workspace has it installed with
 * `mail:read` granted (otherwise nothing happens and nothing is audited). The dispatcher runs the
 * tool and writes the skill_invocation audit row; the job retries if the label cannot be stored.
 */
export const classifyMailJob = defineJob({
  type: 'mail.classify',
  schema: z.object({ messageId: z.string() }),
  maxAttempts: 5,
  backoff: { baseMs: 2_000, maxMs: 60_000 },
  async handler(job, payload) {
    const workspaceId = job.workspaceId!;
    const [row] = await withTenant(job.deps.db, { workspaceId }, (tx) =>
      tx
        .select()
        .from(mailMessages)
        .where(and(eq(mailMessages.workspaceId, workspaceId), eq(mailMessages.id, payload.messageId))),
    );
    if (!row || row.spamLabel || !job.tier) return;
    const ctx: RequestContext = {
      workspaceId,
      organizationId: job.organizationId,
      tier: job.tier,
      userId: 'system:mail',
      role: 'admin',
      isProvider: false,
      requestId: job.requestId,
      log: job.log,
      via: 'system',
    };
    const outcome = await invokeIfInstalled(
      job.deps,
      ctx,
      {
        slug: SPAM_SKILL.slug,
        tool: SPAM_SKILL.tool,
        input: {
          from: row.from.slice(0, 320),
          subject: row.subject.slice(0, 1000),
          // The tool reads at most 50,000 characters of body and needs at least one.
          body: (row.text.trim() || row.subject || '(empty)').slice(0, 50_000),
        },
      },
      'mail',
    );
    const result = outcome?.result as { label?: string; spamProbability?: number } | undefined;
    if (result?.label !== 'spam' && result?.label !== 'ham') return;
    await withTenant(job.deps.db, { workspaceId }, (tx) =>
      tx
        .update(mailMessages)
        .set({ spamLabel: result.label, spamProbability: result.spamProbability ?? null })
        .where(and(eq(mailMessages.workspaceId, workspaceId), eq(mailMessages.id, row.id))),
    );
  },
});

const malformed = (detail: string) => new AppError('malformed_message', 422, detail);

/**
 * A REPLY's RECURRENCE-ID (the occurrence it answers): an instant (`…Z`) when its zone is UTC, defined
 * in the message (a VTIMEZONE, as Outlook sends) or an IANA name; a `YYYY-MM-DD` date for an all-day
 * occurrence; else its wall-clock time, which the calendar reads in the series' zone. Null when the
 * REPLY answers the whole series, undefined when the value cannot be read.
 */
function recurrenceIdOf(event: ICAL.Component): string | null | undefined {
  const property = event.getFirstProperty('recurrence-id');
  if (!property) return null;
  const time = property.getFirstValue();
  if (!(time instanceof ICAL.Time)) return undefined;
  const wallClock = Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second);
  if (Number.isNaN(wallClock)) return undefined;
  if (time.isDate) return new Date(wallClock).toISOString().slice(0, 10);
  if (time.zone && time.zone !== ICAL.Timezone.localTimezone) return new Date(time.toUnixTime() * 1000).toISOString();
  const tzid = property.getParameter('tzid');
  if (typeof tzid === 'string' && isTimeZone(tzid)) return new Date(fromFloating(wallClock, tzid)).toISOString();
  return new Date(wallClock).toISOString().slice(0, 19);
}

/**
 * The calendar part of a message: its METHOD, and for a REPLY each VEVENT's UID, RECURRENCE-ID (one
 * REPLY may answer several occurrences) and each attendee's PARTSTAT.
 */
function readCalendar(text: string) {
  try {
    const root = new ICAL.Component(ICAL.parse(text));
    const method = String(root.getFirstPropertyValue('method') ?? '').toUpperCase() || null;
    const answers = root.getAllSubcomponents('vevent').map((event) => ({
      uid: String(event.getFirstPropertyValue('uid') ?? ''),
      recurrenceId: recurrenceIdOf(event),
      attendees: event
        .getAllProperties('attendee')
        .map((p) => ({ address: String(p.getFirstValue()), partstat: String(p.getParameter('partstat') ?? '') })),
    }));
    return { method, answers };
  } catch {
    return undefined;
  }
}

/** Accepts one raw message: 201 with what was stored, or a problem and nothing stored. */
export async function receiveMail(deps: AppDeps, raw: Buffer, requestId: string) {
  if (raw.length === 0) throw malformed('The message is empty');
  let parsed: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    parsed = await PostalMime.parse(raw);
  } catch {
    throw malformed('The message could not be read as RFC 5322 mail');
  }
  if (!parsed.from?.address) throw malformed('The message has no From address');
  // Mail is text from anyone: NUL and broken surrogates (PostgreSQL cannot store them) and other
  // control characters are dropped, as on the inbound channels, instead of failing the message.
  const recipients = [...(parsed.to ?? []), ...(parsed.cc ?? [])]
    .map((a) => (a.address ? storableText(a.address).toLowerCase() : undefined))
    .filter((a): a is string => Boolean(a));
  const local = recipients.map((a) => workspaceOfAddress(deps.config.inboundMailDomain, a)).find(Boolean);
  if (!local || !(await workspaceExists(deps, local))) {
    throw new AppError(
      'unknown_recipient',
      422,
      `No workspace receives mail at ${recipients.join(', ') || 'these addresses'}`,
    );
  }
  const workspaceId = local;
  const calendarPart = parsed.attachments.find((a) => a.mimeType.toLowerCase().startsWith('text/calendar'));
  const calendarText = calendarPart
    ? typeof calendarPart.content === 'string'
      ? calendarPart.content
      : new TextDecoder().decode(calendarPart.content as ArrayBuffer)
    : undefined;
  const ics = calendarText ? readCalendar(calendarText) : undefined;
  const from = storableText(parsed.from.address).toLowerCase();
  const id = newId('eml');
  const ctx = { workspaceId, userId: null, requestId };
  const stored = await withTenant(deps.db, ctx, async (tx) => {
    const [row] = await tx
      .insert(mailMessages)
      .values({
        workspaceId,
        id,
        from,
        to: recipients,
        subject: storableText(parsed.subject ?? '').slice(0, 998),
        text: storableText(parsed.text ?? '').slice(0, 100_000),
        calendarMethod: ics?.method ?? null,
        sizeBytes: raw.length,
      })
      .returning();
    let replyMatched = false;
    if (ics?.method === 'REPLY') {
      for (const { uid, recurrenceId, attendees } of ics.answers) {
        // An occurrence we cannot read must not be taken for the whole series.
        if (!uid || recurrenceId === undefined) continue;
        // Only the sender's own answer counts: a REPLY cannot change someone else's status.
        for (const a of attendees.filter((x) => x.address.replace(/^mailto:/i, '').toLowerCase() === from)) {
          const answer = { uid, attendee: a.address, partstat: a.partstat, recurrenceId };
          replyMatched = (await recordInvitationReply(tx, workspaceId, answer)) || replyMatched;
        }
      }
    }
    // Calendar answers are machine mail: they update the event and are never spam-labelled.
    if (!ics?.method) await enqueueJob(tx, classifyMailJob, { messageId: id }, { workspaceId });
    await publishEvent(tx, { workspaceId }, 'mail.received', {
      messageId: id,
      from,
      subject: row.subject,
      calendarMethod: row.calendarMethod,
    });
    return { row, replyMatched };
  });
  return { ...present(stored.row), workspaceId, replyMatched: stored.replyMatched };
}

export async function listMail(deps: AppDeps, ctx: RequestContext, query: { limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, z.string());
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(mailMessages)
      .where(and(eq(mailMessages.workspaceId, ctx.workspaceId), after ? lt(mailMessages.id, after) : undefined))
      .orderBy(desc(mailMessages.id))
      .limit(query.limit + 1),
  );
  const page = toPage(rows, query.limit, (r) => r.id);
  return { items: page.items.map(present), nextCursor: page.nextCursor };
}

export async function getMail(deps: AppDeps, ctx: RequestContext, id: string) {
  const [row] = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(mailMessages)
      .where(and(eq(mailMessages.workspaceId, ctx.workspaceId), eq(mailMessages.id, id))),
  );
  if (!row) throw notFound('Message');
  return present(row);
}
