// Telegram Bot API: webhooks carry `X-Telegram-Bot-Api-Secret-Token` (the secret given to
// setWebhook); an `Update` holds at most one message; replies via `sendMessage`.
import { z } from 'zod';
import { safeEqual } from '../../../platform/crypto.js';
import { contactCardText, locationText, UNSUPPORTED_TEXT } from './content.js';
import { type Attachment, type ChannelAdapter, type ChannelEvent, SendFailed } from './types.js';
import { header, idText, MalformedPayload, parseJsonExact, sendCall, upstreamFor } from './wire.js';

const credentials = z.object({
  botToken: z
    .string()
    .trim()
    .min(20)
    .max(200)
    .regex(/^\d+:[\w-]+$/, 'A bot token looks like 123456:ABC-def…'),
  secretToken: z
    .string()
    .min(16)
    .max(256)
    .regex(/^[A-Za-z0-9_-]+$/, 'Telegram allows letters, digits, _ and - in the secret token'),
});
type Credentials = z.infer<typeof credentials>;

const id = z.union([z.number(), z.bigint()]).transform(idText);
const file = z.object({ file_id: z.string(), file_name: z.string().optional(), mime_type: z.string().optional() });
const message = z.object({
  message_id: id,
  date: z.number(),
  chat: z.object({ id }),
  from: z
    .object({
      id,
      first_name: z.string().optional(),
      last_name: z.string().optional(),
      username: z.string().optional(),
    })
    .optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  photo: z.array(z.object({ file_id: z.string() })).optional(),
  document: file.optional(),
  voice: file.optional(),
  audio: file.extend({ title: z.string().optional() }).optional(),
  video: file.optional(),
  video_note: file.optional(),
  animation: file.optional(),
  sticker: file.extend({ emoji: z.string().optional() }).optional(),
  location: z.object({ latitude: z.number(), longitude: z.number() }).optional(),
  venue: z.object({ title: z.string().optional(), address: z.string().optional() }).optional(),
  contact: z
    .object({
      phone_number: z.string(),
      first_name: z.string().optional(),
      last_name: z.string().optional(),
      user_id: id.optional(),
    })
    .optional(),
});
type Message = z.infer<typeof message>;

/** A message's attachments (metadata only: nothing is downloaded) and the words it carries. */
function content(m: Message): { text: string; attachments: Attachment[] } {
  const attachment = (type: string, f: z.infer<typeof file>, name?: string): Attachment => ({
    type,
    ...(f.mime_type ? { mimeType: f.mime_type } : {}),
    ...((name ?? f.file_name) ? { name: name ?? f.file_name } : {}),
  });
  const attachments: Attachment[] = [
    ...(m.photo?.length ? [{ type: 'image', name: m.photo[m.photo.length - 1].file_id }] : []),
    // A GIF comes as both `animation` and `document`: one attachment.
    ...(m.animation
      ? [attachment('animation', m.animation)]
      : m.document
        ? [attachment('file', m.document, m.document.file_name ?? m.document.file_id)]
        : []),
    ...(m.voice ? [attachment('voice', m.voice)] : []),
    ...(m.audio ? [attachment('audio', m.audio, m.audio.file_name ?? m.audio.title)] : []),
    ...(m.video ? [attachment('video', m.video)] : []),
    ...(m.video_note ? [attachment('video_note', m.video_note)] : []),
    ...(m.sticker ? [attachment('sticker', m.sticker)] : []),
  ];
  const words = [m.text ?? m.caption];
  if (m.location) words.push(locationText(m.location.latitude, m.location.longitude, m.venue?.title, m.venue?.address));
  if (m.contact)
    words.push(
      contactCardText([m.contact.first_name, m.contact.last_name].filter(Boolean).join(' '), [m.contact.phone_number]),
    );
  const text = words.filter(Boolean).join('\n');
  // A poll, a dice, a game…: said so, never an empty bubble.
  return { text: text || (attachments.length ? '' : UNSUPPORTED_TEXT), attachments };
}
const update = z.object({ update_id: id, message: message.optional(), edited_message: message.optional() });

/**
 * Telegram names the wait of a 429 in its body (`{"ok":false,"error_code":429,"description":"Too Many
 * Requests: retry after N","parameters":{"retry_after":N}}`, seconds) and may send no Retry-After header.
 */
function telegramRetryAfterMs(body: Buffer): number | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const seconds = (parsed as { parameters?: { retry_after?: unknown } } | null)?.parameters?.retry_after;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

const api = upstreamFor('telegram', { retryAfterFromBody: telegramRetryAfterMs });

export const telegram: ChannelAdapter<Credentials> = {
  channel: 'telegram',
  realBaseUrl: 'https://api.telegram.org',
  emulator: 'telegram',
  credentials,
  webhookBody: {
    mediaType: 'application/json',
    description:
      'A Bot API Update, as Telegram sends it (`X-Telegram-Bot-Api-Secret-Token` carries the secret token given to setWebhook)',
  },
  verify: (request, creds) => safeEqual(header(request, 'x-telegram-bot-api-secret-token') ?? '', creds.secretToken),
  parse(request): ChannelEvent[] {
    const parsed = update.safeParse(parseJsonExact(request.raw));
    if (!parsed.success) throw new MalformedPayload('Not a Telegram Update');
    const m = parsed.data.message;
    // Edits, channel posts, callbacks and the rest are acknowledged and not stored.
    if (!m) return [];
    const name = [m.from?.first_name, m.from?.last_name].filter(Boolean).join(' ') || m.from?.username || null;
    return [
      {
        kind: 'message',
        dedupKey: `update:${parsed.data.update_id}`,
        providerMessageId: m.message_id,
        // A shared contact card is the sender's own number only when it is their own card (Telegram's "share
        // my phone number" sends their user id with it); anyone else's card is message content, never theirs.
        contact: {
          externalId: m.chat.id,
          name,
          phone: m.contact && m.from && m.contact.user_id === m.from.id ? m.contact.phone_number : null,
        },
        ...content(m),
        at: new Date(m.date * 1000),
      },
    ];
  },
  async send(context, creds, to, text) {
    const body = await sendCall<{ ok: boolean; result?: { message_id: number | string } }>(
      () =>
        api.request({
          method: 'POST',
          retryUnsent: true,
          url: `${context.baseUrl}/bot${creds.botToken}/sendMessage`,
          json: { chat_id: to.externalId, text },
          requestId: context.requestId,
          breakerKey: context.breakerKey,
        }),
      (status, b) =>
        `Telegram refused the message (${status}: ${(b as { description?: string })?.description ?? 'no reason given'})`,
    );
    if (!body.ok || body.result?.message_id === undefined)
      throw new SendFailed('Telegram answered without a message id');
    return { providerMessageId: String(body.result.message_id) };
  },
  async register(context, creds, webhookUrl) {
    await sendCall(
      () =>
        api.request({
          method: 'POST',
          idempotent: true, // the same URL and secret again changes nothing
          url: `${context.baseUrl}/bot${creds.botToken}/setWebhook`,
          json: { url: webhookUrl, secret_token: creds.secretToken, allowed_updates: ['message'] },
          requestId: context.requestId,
          breakerKey: context.breakerKey,
        }),
      (status, b) =>
        `Telegram refused the webhook (${status}: ${(b as { description?: string })?.description ?? 'no reason given'})`,
    );
  },
};
