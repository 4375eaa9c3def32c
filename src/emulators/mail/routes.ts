// Mail emulator: accepts raw RFC 5322 messages (what our mailer builds) and lists them like a mailbox.
import { and, desc, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import PostalMime from 'postal-mime';
import { z } from 'zod';
import { withSystem } from '../../platform/db/tenant.js';
import { readsBody } from '../../platform/http/openapi-media.js';
import { newId } from '../../platform/ids.js';
import { emulatorMail } from '../../platform/platform-tables.js';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';

const addresses = (list: { address?: string }[] | undefined) =>
  (list ?? []).map((a) => a.address?.toLowerCase()).filter((a): a is string => Boolean(a));

type StoredAttachment = (typeof emulatorMail.$inferSelect)['attachments'][number] & { encoding?: 'base64' };

/** An attachment as listed: `content` base64. Rows stored before it was kept as base64 hold decoded text. */
const listedAttachment = ({ filename, contentType, content, encoding }: StoredAttachment) => ({
  filename,
  contentType,
  content: encoding === 'base64' ? content : Buffer.from(content, 'utf8').toString('base64'),
});

export async function mailEmulator(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  fastify.addContentTypeParser(
    'message/rfc822',
    { parseAs: 'buffer', bodyLimit: 25 * 1024 * 1024 },
    (_req, body, done) => done(null, body),
  );

  app.post(
    '/messages',
    {
      schema: {
        tags: ['emulators'],
        summary: 'Submit a raw MIME message',
        ...readsBody({
          'message/rfc822': {
            description: 'One raw RFC 5322 message, as the mailer sends it',
            schema: { type: 'string', contentMediaType: 'message/rfc822' },
          },
        }),
      },
    },
    async (request, reply) => {
      const fault = await applyFault(faults, 'send');
      if (fault) return reply.status(fault.status!).send({ error: 'injected fault' });
      const raw = request.body as Buffer;
      if (!Buffer.isBuffer(raw)) return reply.status(415).send({ error: 'Send message/rfc822' });
      // Attachments as base64, the way the mailbox lists them (contract §11): binary parts survive whole.
      const parsed = await PostalMime.parse(raw, { attachmentEncoding: 'base64' });
      const to = [...addresses(parsed.to), ...addresses(parsed.cc), ...addresses(parsed.bcc)];
      const row = {
        id: newId('eml'),
        from: parsed.from?.address ?? '',
        to,
        subject: parsed.subject ?? '',
        text: parsed.text ?? '',
        html: parsed.html ?? null,
        attachments: parsed.attachments.map((a) => ({
          filename: a.filename ?? 'attachment',
          contentType: a.mimeType,
          content: typeof a.content === 'string' ? a.content : Buffer.from(a.content as ArrayBuffer).toString('base64'),
          encoding: 'base64' as const,
        })),
        raw: raw.toString('utf8'),
      };
      await withSystem(fastify.atrium.db, (tx) => tx.insert(emulatorMail).values(row));
      return reply.status(202).send({ id: row.id });
    },
  );

  app.get(
    '/messages',
    {
      schema: {
        tags: ['emulators'],
        summary: 'What was sent, newest first',
        querystring: z.object({
          to: z.string().optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
        }),
      },
    },
    async (request) => {
      const { to, limit } = request.query;
      const rows = await withSystem(fastify.atrium.db, (tx) =>
        tx
          .select()
          .from(emulatorMail)
          .where(and(to ? sql`${emulatorMail.to} @> ${JSON.stringify([to.toLowerCase()])}::jsonb` : undefined))
          .orderBy(desc(emulatorMail.id))
          .limit(limit),
      );
      return {
        items: rows.map((r) => ({
          id: r.id,
          from: r.from,
          to: r.to,
          subject: r.subject,
          text: r.text,
          html: r.html ?? undefined,
          attachments: r.attachments.map(listedAttachment),
          sentAt: r.sentAt.toISOString(),
        })),
      };
    },
  );
}
