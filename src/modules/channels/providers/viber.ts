// Viber REST bot API: callbacks signed with `X-Viber-Content-Signature: <hex HMAC-SHA256(authToken,
// raw body)>`; `message_token` is a 64-bit integer (kept exact as a string); replies via
// `/pa/send_message`, whose refusals come as HTTP 200 with a non-zero `status`.
import { z } from 'zod';
import { safeEqual } from '../../../platform/crypto.js';
import { contactCardText, locationText, UNSUPPORTED_TEXT } from './content.js';
import { type Attachment, type ChannelAdapter, type ChannelEvent, SendFailed } from './types.js';
import { header, hmacHex, idText, MalformedPayload, parseJsonExact, sendCall, upstreamFor } from './wire.js';

const credentials = z.object({ authToken: z.string().trim().min(16).max(200) });
type Credentials = z.infer<typeof credentials>;

const token = z.union([z.number(), z.bigint(), z.string().regex(/^\d+$/)]).transform(idText);
const callback = z.object({
  event: z.string(),
  timestamp: z.number().optional(),
  message_token: token.optional(),
  user_id: z.string().optional(),
  desc: z.string().optional(),
  sender: z.object({ id: z.string(), name: z.string().optional() }).optional(),
  message: z
    .object({
      type: z.string(),
      text: z.string().optional(),
      media: z.string().optional(),
      file_name: z.string().optional(),
      contact: z.object({ name: z.string().optional(), phone_number: z.string().optional() }).optional(),
      location: z.object({ lat: z.coerce.number(), lon: z.coerce.number() }).optional(),
    })
    .optional(),
});
type ViberMessage = NonNullable<z.infer<typeof callback>['message']>;

/** Viber's message types as the inbox names attachments. */
const MEDIA_TYPE: Record<string, string> = { picture: 'image', video: 'video', file: 'file', sticker: 'sticker' };

/** A message's words and attachments (metadata and Viber's link only: nothing is downloaded). */
function content(m: ViberMessage): { text: string; attachments: Attachment[] } {
  switch (m.type) {
    case 'location':
      return { text: m.location ? locationText(m.location.lat, m.location.lon) : UNSUPPORTED_TEXT, attachments: [] };
    case 'contact':
      return { text: contactCardText(m.contact?.name, [m.contact?.phone_number]), attachments: [] };
    case 'url':
      return { text: m.media ?? m.text ?? '', attachments: [] };
    default: {
      const type = MEDIA_TYPE[m.type];
      const attachments = m.media
        ? [{ type: type ?? m.type, url: m.media, ...(m.file_name ? { name: m.file_name } : {}) }]
        : [];
      const text = m.text ?? '';
      return { text: text || (attachments.length ? '' : UNSUPPORTED_TEXT), attachments };
    }
  }
}

const api = upstreamFor('viber');

export const viber: ChannelAdapter<Credentials> = {
  channel: 'viber',
  realBaseUrl: 'https://chatapi.viber.com',
  emulator: 'viber',
  credentials,
  webhookBody: {
    mediaType: 'application/json',
    description:
      'A Viber REST bot API callback (`event`, `message_token` as a bare number that may exceed 2^53, …), signed in `X-Viber-Content-Signature`',
  },
  verify: (request, creds) =>
    safeEqual(
      (header(request, 'x-viber-content-signature') ?? '').toLowerCase(),
      hmacHex('sha256', creds.authToken, request.raw),
    ),
  parse(request): ChannelEvent[] {
    const parsed = callback.safeParse(parseJsonExact(request.raw));
    if (!parsed.success) throw new MalformedPayload('Not a Viber callback');
    const c = parsed.data;
    switch (c.event) {
      case 'message': {
        if (!c.message_token || !c.sender || !c.message)
          throw new MalformedPayload('A Viber message without its token, sender or message');
        const m = c.message;
        return [
          {
            kind: 'message',
            dedupKey: c.message_token,
            providerMessageId: c.message_token,
            // Viber never tells us the sender's number: a shared contact card is someone's, shown as the message.
            contact: { externalId: c.sender.id, name: c.sender.name ?? null, phone: null },
            ...content(m),
            at: new Date(c.timestamp ?? Date.now()),
          },
        ];
      }
      case 'delivered':
      case 'seen':
      case 'failed':
        if (!c.message_token) return [];
        return [
          {
            kind: 'status',
            status: c.event === 'seen' ? 'read' : c.event,
            providerMessageIds: [c.message_token],
            error: c.event === 'failed' ? (c.desc ?? 'Viber could not deliver the message') : undefined,
          },
        ];
      default:
        // subscribed, unsubscribed, conversation_started, webhook, client_status: acknowledged only.
        return [];
    }
  },
  async send(context, creds, to, text) {
    const body = await sendCall<{ status: number; status_message?: string; message_token?: string | number | bigint }>(
      () =>
        api.request({
          method: 'POST',
          retryUnsent: true,
          url: `${context.baseUrl}/pa/send_message`,
          headers: { 'x-viber-auth-token': creds.authToken },
          json: { receiver: to.externalId, min_api_version: 1, sender: { name: 'Clinic' }, type: 'text', text },
          requestId: context.requestId,
          breakerKey: context.breakerKey,
        }),
      (status, b) =>
        `Viber refused the message (${status}: ${(b as { status_message?: string })?.status_message ?? 'no reason given'})`,
      true,
    );
    if (body.status !== 0 || body.message_token === undefined) {
      throw new SendFailed(
        `Viber refused the message (status ${body.status}: ${body.status_message ?? 'no reason given'})`,
      );
    }
    return { providerMessageId: idText(body.message_token) };
  },
};
