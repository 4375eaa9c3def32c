// Twilio Programmable Messaging (SMS): form-encoded webhooks signed with `X-Twilio-Signature:
// base64(HMAC-SHA1(authToken, full URL + each parameter name and value, sorted by name))`;
// replies via `POST /2010-04-01/Accounts/{sid}/Messages.json` with a status callback.
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { safeEqual } from '../../../platform/crypto.js';
import { FORM_CONTENT_TYPE, type FormBody, parseFormBody } from '../../../platform/http/raw-body.js';
import { type ChannelAdapter, type ChannelEvent, SendFailed, type StatusUpdate } from './types.js';
import { header, MalformedPayload, sendCall, upstreamFor } from './wire.js';

const credentials = z.object({
  accountSid: z
    .string()
    .trim()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'An Account SID is AC followed by 32 hex digits'),
  authToken: z.string().trim().min(16).max(200),
  phoneNumber: z
    .string()
    .trim()
    .regex(/^\+[1-9]\d{6,14}$/, 'The number in E.164 form, e.g. +15551234567'),
});
type Credentials = z.infer<typeof credentials>;

/** Twilio's signature of a request: the URL, then every parameter (sorted by name) as name + value. */
export function twilioSignature(authToken: string, url: string, params: FormBody): string {
  let data = url;
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    for (const v of Array.isArray(value) ? [...value].sort() : [value]) data += key + v;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

const one = (form: FormBody, key: string) => {
  const v = form[key];
  return Array.isArray(v) ? v[0] : v;
};

const STATUS: Record<string, StatusUpdate['status']> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  failed: 'failed',
  undelivered: 'failed',
};

const api = upstreamFor('twilio');

export const sms: ChannelAdapter<Credentials> = {
  channel: 'sms',
  realBaseUrl: 'https://api.twilio.com',
  emulator: 'twilio',
  credentials,
  webhookBody: {
    mediaType: FORM_CONTENT_TYPE,
    description:
      'Twilio’s incoming-message or status callback parameters (`MessageSid`, `AccountSid`, `From`, `To`, `Body`, `MessageStatus`, …), signed in `X-Twilio-Signature`',
  },
  verify(request, creds) {
    if (!request.contentType.startsWith(FORM_CONTENT_TYPE)) return false;
    const form = parseFormBody(request.raw.toString('utf8'));
    const signed = safeEqual(
      header(request, 'x-twilio-signature') ?? '',
      twilioSignature(creds.authToken, request.url, form),
    );
    // A valid signature for another account's number is still not ours.
    const account = one(form, 'AccountSid');
    return signed && (account === undefined || account === creds.accountSid);
  },
  parse(request): ChannelEvent[] {
    const form = parseFormBody(request.raw.toString('utf8'));
    const sid = one(form, 'MessageSid') ?? one(form, 'SmsSid');
    if (!sid || !/^[A-Z]{2}[0-9a-fA-F]{32}$/.test(sid))
      throw new MalformedPayload('A Twilio callback without a MessageSid');
    const status = one(form, 'MessageStatus') ?? one(form, 'SmsStatus');
    if (status && status !== 'received') {
      const mapped = STATUS[status];
      if (!mapped) return [];
      const code = one(form, 'ErrorCode');
      return [
        {
          kind: 'status',
          status: mapped,
          providerMessageIds: [sid],
          error:
            mapped === 'failed' ? `Twilio could not deliver the message${code ? ` (error ${code})` : ''}` : undefined,
        },
      ];
    }
    const from = one(form, 'From');
    if (!from) throw new MalformedPayload('A Twilio message without From');
    const media = Number(one(form, 'NumMedia') ?? 0);
    const attachments = Array.from({ length: Number.isInteger(media) ? Math.min(media, 10) : 0 }, (_, i) => {
      const mimeType = one(form, `MediaContentType${i}`);
      // Named by what it is (a photo, a voice recording, a video), else an attachment.
      const kind = /^(image|audio|video)\//.exec(mimeType ?? '')?.[1] ?? 'media';
      return { type: kind, url: one(form, `MediaUrl${i}`), mimeType };
    }).filter((a) => a.url);
    return [
      {
        kind: 'message',
        dedupKey: sid,
        providerMessageId: sid,
        contact: { externalId: from, name: null, phone: from },
        text: one(form, 'Body') ?? '',
        attachments,
        at: new Date(),
      },
    ];
  },
  async send(context, creds, to, text) {
    const body = await sendCall<{ sid?: string }>(
      () =>
        api.request({
          method: 'POST',
          retryUnsent: true,
          url: `${context.baseUrl}/2010-04-01/Accounts/${creds.accountSid}/Messages.json`,
          headers: {
            authorization: `Basic ${Buffer.from(`${creds.accountSid}:${creds.authToken}`).toString('base64')}`,
          },
          form: {
            To: to.phone ?? to.externalId,
            From: creds.phoneNumber,
            Body: text,
            StatusCallback: context.statusCallbackUrl,
          },
          requestId: context.requestId,
          breakerKey: context.breakerKey,
        }),
      (status, b) => {
        const e = b as { code?: number; message?: string };
        return `Twilio refused the message (${status}${e?.code ? `, error ${e.code}` : ''}: ${e?.message ?? 'no reason given'})`;
      },
    );
    if (!body.sid) throw new SendFailed('Twilio answered without a message SID');
    return { providerMessageId: body.sid };
  },
};
