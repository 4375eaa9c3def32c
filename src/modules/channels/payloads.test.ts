// Real-shaped provider payloads beyond plain text: what a patient may send on each channel (emoji at a
// clipping edge, buttons, voice notes, locations, contact cards, reactions), mixed batches with items we
// do not handle, and status reports that arrive before the send's answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  CHANNELS,
  type Channel,
  type Connected,
  connectChannel,
  postSigned,
  providerId,
  senderId,
} from '../../../test/helpers/channels.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { clip } from './inbound.js';

let t: TestApp;
let ws: TestWorkspace;
const connections = new Map<Channel, Connected>();

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token: ws.admin.token, payload: payload as Record<string, unknown> });

interface Message {
  id: string;
  conversationId: string;
  providerMessageId: string;
  text: string;
  attachments: { type: string; url?: string; mimeType?: string; name?: string }[];
  status: string;
  error: string | null;
}
interface Conversation {
  id: string;
  contact: { externalId: string; name: string | null; phone: string | null };
  lastMessage: { text: string; status: string } | null;
  unreadCount: number;
}

const messageOf = async (channel: Channel, providerMessageId: string): Promise<Message | undefined> =>
  (await api('GET', `/channels/messages?channel=${channel}&limit=200`))
    .json()
    .items.find((m: Message) => m.providerMessageId === providerMessageId);

const conversationWith = async (channel: Channel, externalId: string): Promise<Conversation | undefined> =>
  (await api('GET', `/channels/conversations?channel=${channel}&limit=200`))
    .json()
    .items.find((c: Conversation) => c.contact.externalId === externalId);

/** No unpaired surrogate (what PostgreSQL's JSON refuses). */
const wellFormed = (text: string) =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

/** A WhatsApp Cloud API notification: one change holding these messages (and contacts' names). */
const whatsappBody = (messages: Record<string, unknown>[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: {
                display_phone_number: '15550783881',
                phone_number_id: connections.get('whatsapp')!.credentials.phoneNumberId,
              },
              contacts: [...new Set(messages.map((m) => m.from))].map((from) => ({
                profile: { name: 'Pat' },
                wa_id: from,
              })),
              messages,
              ...extra,
            },
          },
        ],
      },
    ],
  });

const waText = (from: string, body: string, id = providerId('whatsapp')) => ({
  from,
  id,
  timestamp: String(Math.floor(Date.now() / 1000)),
  type: 'text',
  text: { body },
});

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  for (const channel of CHANNELS) connections.set(channel, await connectChannel(t, ws.admin.token, channel));
}, 60_000);
afterAll(async () => t?.close());

describe('clipping', () => {
  it('never splits a surrogate pair or a grapheme', () => {
    const emoji = `${'a'.repeat(198)}😀 and more`;
    expect(clip(emoji, 200)).toBe(`${'a'.repeat(198)}…`);
    expect(clip(`${'a'.repeat(197)}👨‍👩‍👧 family`, 200)).toBe(`${'a'.repeat(197)}…`);
    expect(clip('🇩🇪'.repeat(150), 200)).toBe(`${'🇩🇪'.repeat(49)}…`);
    expect(clip('abcdef', 3)).toBe('ab…');
    expect(clip('abc', 3)).toBe('abc');
    for (let n = 1; n < 40; n++) {
      const clipped = clip('x😀é👍🏽🇫🇷'.repeat(5), n);
      expect(clipped.length).toBeLessThanOrEqual(n);
      expect(wellFormed(clipped)).toBe(true);
    }
  });

  it('an emoji at the preview edge is stored, with every other message of the notification; a reply too', async () => {
    const whatsapp = connections.get('whatsapp')!;
    const patient = senderId('whatsapp');
    const other = senderId('whatsapp');
    const long = waText(patient, `${'a'.repeat(198)}😀 see you tomorrow`);
    const plain = waText(other, 'Plain hello');
    const res = await postSigned(t, whatsapp, whatsappBody([long, plain]));
    expect(res.statusCode, res.body).toBe(200);
    expect((await messageOf('whatsapp', long.id))?.text).toBe(long.text.body);
    expect((await messageOf('whatsapp', plain.id))?.text).toBe('Plain hello');
    const conversation = (await conversationWith('whatsapp', patient))!;
    expect(conversation.lastMessage?.text).toBe(`${'a'.repeat(198)}…`);

    const sent = await api('POST', `/channels/conversations/${conversation.id}/messages`, {
      text: `${'b'.repeat(198)}👍🏽 booked`,
    });
    expect(sent.statusCode, sent.body).toBe(201);
    const after = (await conversationWith('whatsapp', patient))!;
    expect(after.lastMessage?.text).toBe(`${'b'.repeat(198)}…`);
    expect(wellFormed(after.lastMessage?.text ?? '')).toBe(true);
  });
});

/** A Messenger or Instagram notification: one entry with these `messaging` items. */
const pageBody = (channel: 'messenger' | 'instagram', messaging: Record<string, unknown>[]) =>
  JSON.stringify({
    object: channel === 'messenger' ? 'page' : 'instagram',
    entry: [{ id: connections.get(channel)!.credentials.pageId, time: Date.now(), messaging }],
  });

const pageText = (channel: 'messenger' | 'instagram', from: string, text: string, mid = providerId(channel)) => ({
  sender: { id: from },
  recipient: { id: connections.get(channel)!.credentials.pageId },
  timestamp: Date.now(),
  message: { mid, text },
});

/** Replies to a conversation (as a receptionist would), each one's provider id in order. */
async function replies(conversationId: string, texts: string[]): Promise<Message[]> {
  const sent: Message[] = [];
  for (const text of texts) {
    const res = await api('POST', `/channels/conversations/${conversationId}/messages`, { text });
    expect(res.statusCode, res.body).toBe(201);
    sent.push(res.json());
  }
  return sent;
}

const statusOf = async (id: string) =>
  (await api('GET', '/channels/messages?limit=200')).json().items.find((m: Message) => m.id === id)?.status;

describe('items we do not handle never cost the rest of the notification', () => {
  it('Messenger: an optin (no sender) beside a patient message: 200, the message stored, the optin skipped', async () => {
    const messenger = connections.get('messenger')!;
    const patient = senderId('messenger');
    const m = pageText('messenger', patient, 'Can I move my appointment?');
    const res = await postSigned(
      t,
      messenger,
      pageBody('messenger', [
        {
          recipient: { id: messenger.credentials.pageId },
          timestamp: Date.now(),
          optin: { ref: 'landing', user_ref: 'UNIQUE_REF_123' },
        },
        m,
        { sender: { id: patient }, recipient: { id: messenger.credentials.pageId }, timestamp: Date.now() },
      ]),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ stored: 1, skipped: 2 });
    expect((await messageOf('messenger', m.message.mid))?.text).toBe('Can I move my appointment?');
  });

  it('Instagram: messaging_seen names the message seen (no watermark): it and earlier replies are read, not later ones', async () => {
    const instagram = connections.get('instagram')!;
    const patient = senderId('instagram');
    const first = pageText('instagram', patient, 'Hi, are you open?');
    expect((await postSigned(t, instagram, pageBody('instagram', [first]))).statusCode).toBe(200);
    const conversation = (await conversationWith('instagram', patient))!;
    const [a, b, c] = await replies(conversation.id, ['Yes', 'Until six', 'Anything else?']);
    const next = pageText('instagram', patient, 'Thanks!');
    const res = await postSigned(
      t,
      instagram,
      pageBody('instagram', [
        {
          sender: { id: patient },
          recipient: { id: instagram.credentials.pageId },
          timestamp: Date.now(),
          read: { mid: b.providerMessageId },
        },
        next,
      ]),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ stored: 1, statuses: 2 });
    expect((await messageOf('instagram', next.message.mid))?.text).toBe('Thanks!');
    expect([await statusOf(a.id), await statusOf(b.id), await statusOf(c.id)]).toEqual(['read', 'read', 'sent']);
    // Another contact's "seen" of this message changes nothing.
    const stranger = await postSigned(
      t,
      instagram,
      pageBody('instagram', [
        { sender: { id: senderId('instagram') }, timestamp: Date.now(), read: { mid: c.providerMessageId } },
      ]),
    );
    expect(stranger.statusCode).toBe(200);
    expect(await statusOf(c.id)).toBe('sent');
  });

  it('WhatsApp: a message or status not in the shape we know is skipped; the rest of the notification is stored', async () => {
    const whatsapp = connections.get('whatsapp')!;
    const good = waText(senderId('whatsapp'), 'Good morning');
    const res = await postSigned(
      t,
      whatsapp,
      whatsappBody([{ from: good.from, type: 'text', text: { body: 'no id' } }, good], {
        statuses: [{ status: 'delivered' }],
      }),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ stored: 1, skipped: 2 });
    expect((await messageOf('whatsapp', good.id))?.text).toBe('Good morning');
    // The envelope itself is still Meta's or refused.
    const refused = await postSigned(t, whatsapp, JSON.stringify({ object: 'page', entry: [] }));
    expect(refused.statusCode).toBe(400);
  });
});
