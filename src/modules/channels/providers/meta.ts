// Meta's Graph webhooks (WhatsApp Cloud API, Messenger, Instagram): `X-Hub-Signature-256:
// sha256=<HMAC-SHA256(appSecret, raw body)>`, the `hub.challenge` handshake with the verify token,
// and replies through the Graph API (`/{phone-number-id}/messages`, `/me/messages`).
import { z } from 'zod';
import { safeEqual } from '../../../platform/crypto.js';
import { createUpstream, UpstreamError } from '../../../platform/upstream/index.js';
import { contactCardText, locationText, UNSUPPORTED_TEXT } from './content.js';
import type {
  Attachment,
  ChannelAdapter,
  ChannelEvent,
  ChannelName,
  ProfileContext,
  ProfileLookup,
  SkippedItem,
  StatusUpdate,
} from './types.js';
import { SendFailed } from './types.js';
import { header, hmacHex, idText, MalformedPayload, parseJsonExact, sendCall, upstreamFor } from './wire.js';

export const GRAPH_VERSION = 'v21.0';

const secret = z.string().trim().min(8).max(200);
const whatsappCredentials = z.object({
  appSecret: secret,
  verifyToken: secret,
  accessToken: z.string().trim().min(8).max(1000),
  phoneNumberId: z
    .string()
    .trim()
    .regex(/^\d{5,30}$/, 'The phone number id is the number Meta shows, digits only'),
});
const pageCredentials = z.object({
  appSecret: secret,
  verifyToken: secret,
  accessToken: z.string().trim().min(8).max(1000),
  pageId: z
    .string()
    .trim()
    .regex(/^\d{5,30}$/, 'The page id is the number Meta shows, digits only'),
});
type WhatsAppCredentials = z.infer<typeof whatsappCredentials>;
type PageCredentials = z.infer<typeof pageCredentials>;

const id = z.union([z.string(), z.number(), z.bigint()]).transform(idText);
const seconds = z.union([z.string(), z.number()]).transform((v) => new Date(Number(v) * 1000));

/** HMAC-SHA256 of the raw bytes with the app secret, compared in constant time. */
function verifyHub(raw: Buffer, signature: string | undefined, appSecret: string): boolean {
  if (!signature?.startsWith('sha256=')) return false;
  return safeEqual(signature.slice(7).toLowerCase(), hmacHex('sha256', appSecret, raw));
}

// Notifications are read part by part: the envelope must be Meta's (else 400), but each change, message,
// status and `messaging[]` item is parsed on its own, and one that is not a kind we handle (Messenger's
// `optin`, a reaction) or not in the shape we know is skipped and counted, never the whole notification.

const waEnvelope = z.object({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(z.object({ changes: z.array(z.unknown()).optional() })),
});
const waChange = z.object({
  field: z.string(),
  value: z.object({
    metadata: z
      .object({ phone_number_id: z.string().max(100).optional() })
      .partial()
      .optional(),
    contacts: z.array(z.unknown()).optional(),
    messages: z.array(z.unknown()).optional(),
    statuses: z.array(z.unknown()).optional(),
  }),
});
const waContact = z.object({ wa_id: id, profile: z.object({ name: z.string() }).partial().optional() });
const media = z.object({
  id: z.string().optional(),
  mime_type: z.string().optional(),
  caption: z.string().optional(),
  filename: z.string().optional(),
  /** An audio message recorded in WhatsApp (a voice note), not a file. */
  voice: z.boolean().optional(),
});
const titled = z.object({ title: z.string().optional() });
const waMessage = z.object({
  id: z.string(),
  from: id,
  timestamp: seconds,
  type: z.string(),
  text: z.object({ body: z.string() }).optional(),
  image: media.optional(),
  document: media.optional(),
  audio: media.optional(),
  video: media.optional(),
  sticker: media.optional(),
  /** A quick-reply button of a template the patient pressed. */
  button: z.object({ text: z.string().optional() }).optional(),
  interactive: z
    .object({
      button_reply: titled.optional(),
      list_reply: titled.optional(),
      nfm_reply: z.object({ body: z.string().optional() }).optional(),
    })
    .optional(),
  location: z
    .object({
      latitude: z.coerce.number(),
      longitude: z.coerce.number(),
      name: z.string().optional(),
      address: z.string().optional(),
    })
    .optional(),
  contacts: z
    .array(
      z.object({
        name: z.object({ formatted_name: z.string().optional(), first_name: z.string().optional() }).optional(),
        phones: z.array(z.object({ phone: z.string().optional() })).optional(),
      }),
    )
    .optional(),
  system: z.object({ body: z.string().optional() }).optional(),
});
type WaMessage = z.infer<typeof waMessage>;
const waStatus = z.object({
  id: z.string(),
  status: z.string(),
  errors: z
    .array(
      z.object({
        code: z.union([z.number(), z.string()]).optional(),
        title: z.string().optional(),
        message: z.string().optional(),
        error_data: z.object({ details: z.string().optional() }).optional(),
      }),
    )
    .optional(),
});

/** Graph's error as we keep it: its code (the inbox explains the common ones), title and details. */
function graphErrorWords(e: {
  code?: number | string;
  title?: string;
  message?: string;
  error_data?: { details?: string };
}): string {
  const what = [e.title ?? e.message, e.error_data?.details].filter(Boolean).join(' — ');
  return e.code !== undefined ? `code ${e.code}${what ? `: ${what}` : ''}` : what;
}

const STATUS: Record<string, StatusUpdate['status']> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  failed: 'failed',
};

const skipped = (what: string): SkippedItem => ({ kind: 'skipped', what });

/** A WhatsApp message's words and attachments (metadata only: nothing is downloaded). */
function waContent(m: WaMessage): { text: string; attachments: Attachment[] } | null {
  const file = (type: string, f: z.infer<typeof media>, name?: string): Attachment => ({
    type,
    ...(f.mime_type ? { mimeType: f.mime_type } : {}),
    ...(name ? { name } : {}),
  });
  switch (m.type) {
    case 'text':
      return { text: m.text?.body ?? '', attachments: [] };
    case 'button':
      return { text: m.button?.text ?? '', attachments: [] };
    case 'interactive': {
      const i = m.interactive;
      return { text: i?.button_reply?.title ?? i?.list_reply?.title ?? i?.nfm_reply?.body ?? '', attachments: [] };
    }
    case 'image':
      return m.image ? { text: m.image.caption ?? '', attachments: [file('image', m.image, m.image.id)] } : null;
    case 'document':
      return m.document
        ? {
            text: m.document.caption ?? '',
            attachments: [file('document', m.document, m.document.filename ?? m.document.id)],
          }
        : null;
    case 'audio':
      return m.audio ? { text: '', attachments: [file(m.audio.voice ? 'voice' : 'audio', m.audio)] } : null;
    case 'video':
      return m.video ? { text: m.video.caption ?? '', attachments: [file('video', m.video)] } : null;
    case 'sticker':
      return m.sticker ? { text: '', attachments: [file('sticker', m.sticker)] } : null;
    case 'location':
      return m.location
        ? {
            text: locationText(m.location.latitude, m.location.longitude, m.location.name, m.location.address),
            attachments: [],
          }
        : null;
    case 'contacts':
      return {
        text: (m.contacts ?? [])
          .map((c) =>
            contactCardText(
              c.name?.formatted_name ?? c.name?.first_name,
              (c.phones ?? []).map((p) => p.phone),
            ),
          )
          .join('\n'),
        attachments: [],
      };
    case 'system':
      return { text: m.system?.body ? `[System message] ${m.system.body}` : '[System message]', attachments: [] };
    default:
      // `unsupported` (a kind the Cloud API does not pass on), and whatever comes next.
      return { text: UNSUPPORTED_TEXT, attachments: [] };
  }
}

function whatsappEvents(raw: Buffer): ChannelEvent[] {
  const envelope = waEnvelope.safeParse(parseJsonExact(raw));
  if (!envelope.success) throw new MalformedPayload('Not a WhatsApp Cloud API notification');
  const out: ChannelEvent[] = [];
  for (const rawChange of envelope.data.entry.flatMap((e) => e.changes ?? [])) {
    const change = waChange.safeParse(rawChange);
    if (!change.success) {
      out.push(skipped('whatsapp.change'));
      continue;
    }
    const { field, value } = change.data;
    if (field !== 'messages') {
      out.push(skipped(`whatsapp.${field.slice(0, 40)}`));
      continue;
    }
    const businessId = value.metadata?.phone_number_id;
    const names = new Map<string, string | null>();
    for (const c of value.contacts ?? []) {
      const contact = waContact.safeParse(c);
      if (contact.success) names.set(contact.data.wa_id, contact.data.profile?.name ?? null);
    }
    for (const raw of value.messages ?? []) {
      const parsed = waMessage.safeParse(raw);
      if (!parsed.success) {
        out.push(skipped('whatsapp.message'));
        continue;
      }
      const m = parsed.data;
      // A reaction is to a message already shown: acknowledged, not a new message.
      if (m.type === 'reaction') {
        out.push(skipped('whatsapp.reaction'));
        continue;
      }
      const content = waContent(m);
      if (!content) {
        out.push(skipped(`whatsapp.message.${m.type.slice(0, 20)}`));
        continue;
      }
      out.push({
        kind: 'message',
        dedupKey: m.id,
        providerMessageId: m.id,
        contact: { externalId: m.from, name: names.get(m.from) ?? null, phone: `+${m.from}` },
        ...content,
        at: m.timestamp,
        businessId,
      });
    }
    for (const raw of value.statuses ?? []) {
      const parsed = waStatus.safeParse(raw);
      if (!parsed.success) {
        out.push(skipped('whatsapp.status'));
        continue;
      }
      const s = parsed.data;
      const status = STATUS[s.status];
      if (!status) {
        out.push(skipped(`whatsapp.status.${s.status.slice(0, 20)}`));
        continue;
      }
      const words = s.errors?.map(graphErrorWords).filter(Boolean).join('; ');
      const error =
        status === 'failed' ? `WhatsApp could not deliver the message${words ? ` (${words})` : ''}` : undefined;
      out.push({ kind: 'status', status, providerMessageIds: [s.id], error, businessId });
    }
  }
  return out;
}

const pageEnvelope = (object: 'page' | 'instagram') =>
  z.object({
    object: z.literal(object),
    entry: z.array(
      z.object({
        /** The page (Messenger) or Instagram account the events were sent to. */
        id: id.optional(),
        messaging: z.array(z.unknown()).optional(),
      }),
    ),
  });

const pageAttachment = z.object({
  type: z.string(),
  title: z.string().optional(),
  payload: z
    .object({
      url: z.string().optional(),
      title: z.string().optional(),
      sticker_id: z.union([z.number(), z.string()]).optional(),
      coordinates: z.object({ lat: z.coerce.number(), long: z.coerce.number() }).optional(),
    })
    .nullish(),
});
const pageItem = z.object({
  sender: z.object({ id }),
  recipient: z.object({ id }).optional(),
  timestamp: z.number().optional(),
  message: z
    .object({
      mid: z.string(),
      text: z.string().optional(),
      is_echo: z.boolean().optional(),
      attachments: z.array(z.unknown()).optional(),
    })
    .optional(),
  delivery: z.object({ mids: z.array(z.string()).optional(), watermark: z.number().optional() }).optional(),
  read: z.object({ watermark: z.number().optional(), mid: z.string().optional() }).optional(),
  /** A button the patient pressed (a template's, the persistent menu's, Get Started): its title is what they said. */
  postback: z.object({ mid: z.string().optional(), title: z.string().optional() }).optional(),
});
type PageItem = z.infer<typeof pageItem>;

/** The kinds of `messaging[]` item Meta sends that we do not store (named for the log, nothing else). */
const OTHER_PAGE_ITEMS = ['optin', 'referral', 'reaction', 'account_linking', 'policy_enforcement', 'message_edit'];

/** One `messaging` item's events, each naming the page or account it was sent to. */
function pageEvents(channel: string, raw: unknown, businessId: string | undefined): ChannelEvent[] {
  const parsed = pageItem.safeParse(raw);
  if (!parsed.success) {
    const kind = OTHER_PAGE_ITEMS.find((k) => raw && typeof raw === 'object' && k in raw);
    return [skipped(`${channel}.messaging${kind ? `.${kind}` : ''}`)];
  }
  const event: PageItem = parsed.data;
  const out: ChannelEvent[] = [];
  const to = businessId ? { businessId } : {};
  if (event.message?.is_echo) {
    // Our own replies come back as echoes: they are already stored.
    out.push(skipped(`${channel}.echo`));
  } else if (event.message) {
    const attachments: Attachment[] = [];
    const words = event.message.text ? [event.message.text] : [];
    for (const a of event.message.attachments ?? []) {
      const parsedAttachment = pageAttachment.safeParse(a);
      if (!parsedAttachment.success) continue;
      const { type, payload, title } = parsedAttachment.data;
      if (type === 'location' && payload?.coordinates) {
        words.push(locationText(payload.coordinates.lat, payload.coordinates.long, title ?? payload.title));
        continue;
      }
      // A sticker (or a thumbs-up) comes as an image with its sticker id.
      const kind = type === 'image' && payload?.sticker_id !== undefined ? 'sticker' : type;
      attachments.push({
        type: kind,
        ...(payload?.url ? { url: payload.url } : {}),
        ...((title ?? payload?.title) ? { name: title ?? payload?.title } : {}),
      });
    }
    out.push({
      kind: 'message',
      dedupKey: event.message.mid,
      providerMessageId: event.message.mid,
      contact: { externalId: event.sender.id, name: null, phone: null },
      // A shared post or product we cannot show: said so, never an empty bubble.
      text: words.join('\n') || (attachments.length ? '' : UNSUPPORTED_TEXT),
      attachments,
      at: new Date(event.timestamp ?? Date.now()),
      ...to,
    });
  }
  if (event.postback) {
    // Older postbacks carry no mid: the sender and the time make the retry recognisable.
    const key = event.postback.mid ?? `postback:${event.sender.id}:${event.timestamp ?? 0}`;
    out.push({
      kind: 'message',
      dedupKey: key,
      providerMessageId: key,
      contact: { externalId: event.sender.id, name: null, phone: null },
      text: event.postback.title || UNSUPPORTED_TEXT,
      attachments: [],
      at: new Date(event.timestamp ?? Date.now()),
      ...to,
    });
  }
  if (event.delivery) {
    if (event.delivery.mids?.length)
      out.push({ kind: 'status', status: 'delivered', providerMessageIds: event.delivery.mids, ...to });
    else if (event.delivery.watermark !== undefined)
      out.push({
        kind: 'status',
        status: 'delivered',
        contactExternalId: event.sender.id,
        watermark: new Date(event.delivery.watermark),
        ...to,
      });
  }
  if (event.read) {
    // Messenger reads by watermark (everything sent before it); Instagram's `messaging_seen` names the
    // message seen: it and every earlier one sent in that conversation are read.
    if (event.read.watermark !== undefined)
      out.push({
        kind: 'status',
        status: 'read',
        contactExternalId: event.sender.id,
        watermark: new Date(event.read.watermark),
        ...to,
      });
    else if (event.read.mid)
      out.push({
        kind: 'status',
        status: 'read',
        contactExternalId: event.sender.id,
        upToProviderMessageId: event.read.mid,
        ...to,
      });
  }
  if (out.length === 0) {
    const kind = OTHER_PAGE_ITEMS.find((k) => raw && typeof raw === 'object' && k in raw);
    out.push(skipped(`${channel}.messaging${kind ? `.${kind}` : ''}`));
  }
  return out;
}

const graph = upstreamFor('meta');

const graphError = (service: string) => (status: number, body: unknown) => {
  const error = (body as { error?: { message?: string; code?: number; error_data?: { details?: string } } })?.error;
  const words = [error?.message, error?.error_data?.details].filter(Boolean).join(' — ');
  return `${service} refused the message (${status}${error?.code ? `, code ${error.code}` : ''}: ${words || 'no reason given'})`;
};

export const whatsapp: ChannelAdapter<WhatsAppCredentials> = {
  channel: 'whatsapp',
  realBaseUrl: 'https://graph.facebook.com',
  emulator: 'meta',
  credentials: whatsappCredentials,
  webhookBody: {
    mediaType: 'application/json',
    description:
      'A WhatsApp Cloud API notification (`object`, `entry[].changes[]`), signed in `X-Hub-Signature-256` with the app secret',
  },
  verify: (request, creds) => verifyHub(request.raw, header(request, 'x-hub-signature-256'), creds.appSecret),
  verifyToken: (creds) => creds.verifyToken,
  businessIdOf: (creds) => creds.phoneNumberId,
  signingSecretOf: (creds) => creds.appSecret,
  parse: (request) => whatsappEvents(request.raw),
  async send(context, creds, to, text) {
    const body = await sendCall<{ messages?: { id: string }[] }>(
      () =>
        graph.request({
          method: 'POST',
          retryUnsent: true,
          url: `${context.baseUrl}/${GRAPH_VERSION}/${creds.phoneNumberId}/messages`,
          headers: { authorization: `Bearer ${creds.accessToken}` },
          json: {
            messaging_product: 'whatsapp',
            recipient_type: 'individual',
            to: to.externalId,
            type: 'text',
            text: { body: text },
          },
          requestId: context.requestId,
          breakerKey: context.breakerKey,
        }),
      graphError('WhatsApp'),
    );
    const messageId = body.messages?.[0]?.id;
    if (!messageId) throw new SendFailed('WhatsApp answered without a message id');
    return { providerMessageId: messageId };
  },
};

// ---------------------------------------------------------------- contact profiles

/**
 * Profile reads have their own upstream (metrics apart from the sends), a breaker per connection, a
 * shorter deadline (nobody waits on them) and the usual retries: a GET is idempotent.
 */
const profiles = createUpstream({
  name: 'channels:meta-profile',
  timeoutMs: 5_000,
  retries: 2,
  breaker: { consecutiveFailures: 5 },
});

/** Graph's codes that mean "not now" rather than "no": unknown/temporary errors and rate limits. */
const TRANSIENT_GRAPH_CODES = new Set([1, 2, 4, 17, 32, 341, 613]);

const graphErrorOf = (body: unknown) =>
  (body as { error?: { code?: unknown; error_subcode?: unknown; type?: unknown; is_transient?: unknown } } | null)
    ?.error;

/**
 * A Messenger or Instagram contact's name (Graph's User Profile API: `GET /{PSID}?fields=first_name,last_name`,
 * Instagram's `GET /{IGSID}?fields=name,username`) with the page's token, sent as a header (never in a URL,
 * which proxies and logs keep). What Graph refuses is `refused` with its status and codes only; the
 * message Graph wrote is left out, so nothing it says about the person reaches a log or a job row.
 */
async function graphProfile(
  channel: 'messenger' | 'instagram',
  context: ProfileContext,
  accessToken: string,
  externalId: string,
): Promise<ProfileLookup> {
  // Page- and Instagram-scoped ids are numbers: anything else is not asked (nor put in a path).
  if (!/^\d{1,40}$/.test(externalId)) return { outcome: 'refused', reason: 'not a Graph user id' };
  const fields = channel === 'messenger' ? 'first_name,last_name' : 'name,username';
  let response: Awaited<ReturnType<typeof profiles.request>>;
  try {
    response = await profiles.request({
      method: 'GET',
      url: `${context.baseUrl}/${GRAPH_VERSION}/${externalId}`,
      query: { fields },
      headers: { authorization: `Bearer ${accessToken}` },
      requestId: context.requestId,
      breakerKey: context.breakerKey,
      signal: context.signal,
    });
  } catch (err) {
    if (err instanceof UpstreamError)
      return { outcome: 'unavailable', reason: `Graph could not be reached (${err.kind})` };
    throw err;
  }
  let body: unknown = null;
  try {
    body = response.json();
  } catch {
    // Not JSON: judged by the status alone.
  }
  if (response.ok) {
    const profile = (body ?? {}) as { first_name?: unknown; last_name?: unknown; name?: unknown; username?: unknown };
    const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
    const name =
      channel === 'messenger'
        ? [text(profile.first_name), text(profile.last_name)].filter(Boolean).join(' ') || null
        : (text(profile.name) ?? (text(profile.username) ? `@${text(profile.username)}` : null));
    return { outcome: 'found', name };
  }
  const error = graphErrorOf(body);
  const code = typeof error?.code === 'number' ? error.code : undefined;
  const subcode = typeof error?.error_subcode === 'number' ? error.error_subcode : undefined;
  const reason = `Graph answered ${response.status}${code !== undefined ? `, code ${code}${subcode !== undefined ? `/${subcode}` : ''}` : ''}`;
  if (
    response.status >= 500 ||
    response.status === 429 ||
    response.status === 408 ||
    error?.is_transient === true ||
    (code !== undefined && TRANSIENT_GRAPH_CODES.has(code))
  ) {
    const retryAfter = Number(response.headers['retry-after']);
    return {
      outcome: 'unavailable',
      reason,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  }
  return { outcome: 'refused', reason };
}

function pageAdapter(channel: Extract<ChannelName, 'messenger' | 'instagram'>): ChannelAdapter<PageCredentials> {
  const envelope = pageEnvelope(channel === 'messenger' ? 'page' : 'instagram');
  const service = channel === 'messenger' ? 'Messenger' : 'Instagram';
  return {
    channel,
    realBaseUrl: 'https://graph.facebook.com',
    emulator: 'meta',
    credentials: pageCredentials,
    webhookBody: {
      mediaType: 'application/json',
      description: `The ${service} Platform’s webhook notification (\`object\`, \`entry[].messaging[]\`), signed in \`X-Hub-Signature-256\` with the app secret`,
    },
    verify: (request, creds) => verifyHub(request.raw, header(request, 'x-hub-signature-256'), creds.appSecret),
    verifyToken: (creds) => creds.verifyToken,
    // Messenger names the page (`entry[].id` is the Page id we were given). Instagram names the
    // Instagram professional account, another number than the Page id, so its events are not routed.
    ...(channel === 'messenger'
      ? {
          businessIdOf: (creds: PageCredentials) => creds.pageId,
          signingSecretOf: (creds: PageCredentials) => creds.appSecret,
        }
      : {}),
    parse(request): ChannelEvent[] {
      const parsed = envelope.safeParse(parseJsonExact(request.raw));
      if (!parsed.success) throw new MalformedPayload(`Not a ${service} webhook notification`);
      const out: ChannelEvent[] = [];
      for (const entry of parsed.data.entry)
        for (const event of entry.messaging ?? []) out.push(...pageEvents(channel, event, entry.id));
      return out;
    },
    profile: (context, creds, externalId) => graphProfile(channel, context, creds.accessToken, externalId),
    async send(context, creds, to, text) {
      const body = await sendCall<{ message_id?: string }>(
        () =>
          graph.request({
            method: 'POST',
            retryUnsent: true,
            url: `${context.baseUrl}/${GRAPH_VERSION}/me/messages`,
            headers: { authorization: `Bearer ${creds.accessToken}` },
            json: { recipient: { id: to.externalId }, messaging_type: 'RESPONSE', message: { text } },
            requestId: context.requestId,
            breakerKey: context.breakerKey,
          }),
        graphError(service),
      );
      if (!body.message_id) throw new SendFailed(`${service} answered without a message id`);
      return { providerMessageId: body.message_id };
    },
  };
}

export const messenger = pageAdapter('messenger');
export const instagram = pageAdapter('instagram');
