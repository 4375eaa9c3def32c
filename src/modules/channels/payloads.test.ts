// Real-shaped provider payloads beyond plain text: what a patient may send on each channel (emoji at a
// clipping edge, buttons, voice notes, locations, contact cards, reactions), mixed batches with items we
// do not handle, and status reports that arrive before the send's answer.
import { sql } from 'drizzle-orm';
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
import { TEST_SERVER_URL } from '../../../test/helpers/db.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { clip } from './inbound.js';
import { explainFailure } from './providers/content.js';
import { prunePendingStatuses } from './service.js';

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

  it('a delivery report naming a malformed id (a lone surrogate) does not fail the notification it came in', async () => {
    const whatsapp = connections.get('whatsapp')!;
    const text = waText(senderId('whatsapp'), 'Is the clinic open on Saturday?');
    const raw = whatsappBody([text], {
      statuses: [{ id: 'wamid.LONE', status: 'delivered', timestamp: '1', recipient_id: '1' }],
    }).replace('wamid.LONE', 'wamid.\\ud800x');
    expect(raw).toContain('\\ud800x');
    const res = await postSigned(t, whatsapp, raw);
    expect(res.statusCode, res.body).toBe(200);
    expect((await messageOf('whatsapp', text.id))?.text).toBe('Is the clinic open on Saturday?');
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

const telegramUpdate = (from: number, message: Record<string, unknown>, updateId = Number(providerId('telegram'))) =>
  JSON.stringify({
    update_id: updateId,
    message: {
      message_id: updateId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: from, type: 'private', first_name: 'Ada' },
      from: { id: from, is_bot: false, first_name: 'Ada' },
      ...message,
    },
  });

const viberMessage = (from: string, message: Record<string, unknown>, token = providerId('viber')) =>
  `{"event":"message","timestamp":${Date.now()},"chat_hostname":"SN-CHAT-05_","message_token":${token},"sender":{"id":${JSON.stringify(from)},"name":"Ada","api_version":10},"message":${JSON.stringify(message)},"silent":false}`;

/** The conversation's messages, oldest first, as [text, attachments' types]. */
const shown = async (channel: Channel, externalId: string) => {
  const conversation = (await conversationWith(channel, externalId))!;
  const items: Message[] = (await api('GET', `/channels/messages?conversationId=${conversation.id}&limit=100`)).json()
    .items;
  return { conversation, items: items.reverse().map((m) => [m.text, m.attachments.map((a) => a.type)]) };
};

describe('messages that are not plain text', () => {
  it('WhatsApp: buttons, lists, voice, video, sticker, location, contact card, unsupported and system are shown; a reaction is no new message', async () => {
    const whatsapp = connections.get('whatsapp')!;
    const from = senderId('whatsapp');
    const base = () => ({ from, id: providerId('whatsapp'), timestamp: String(Math.floor(Date.now() / 1000)) });
    const messages = [
      { ...base(), type: 'button', button: { text: 'Confirm appointment', payload: 'CONFIRM' } },
      {
        ...base(),
        type: 'interactive',
        interactive: { type: 'button_reply', button_reply: { id: 'b1', title: 'Yes' } },
      },
      {
        ...base(),
        type: 'interactive',
        interactive: { type: 'list_reply', list_reply: { id: 'l2', title: 'Tuesday 10:00', description: 'Dr Lee' } },
      },
      {
        ...base(),
        type: 'audio',
        audio: { id: '1001', mime_type: 'audio/ogg; codecs=opus', sha256: 'x', voice: true },
      },
      { ...base(), type: 'video', video: { id: '1002', mime_type: 'video/mp4', caption: 'My knee', sha256: 'x' } },
      { ...base(), type: 'sticker', sticker: { id: '1003', mime_type: 'image/webp', animated: false, sha256: 'x' } },
      {
        ...base(),
        type: 'location',
        location: { latitude: 52.52, longitude: 13.405, name: 'Clinic', address: 'Main St 1, Berlin' },
      },
      {
        ...base(),
        type: 'contacts',
        contacts: [
          { name: { formatted_name: 'Mum', first_name: 'Mum' }, phones: [{ phone: '+49 151 1234567', type: 'CELL' }] },
        ],
      },
      { ...base(), type: 'reaction', reaction: { message_id: 'wamid.earlier', emoji: '👍' } },
      { ...base(), type: 'unsupported', errors: [{ code: 131051, title: 'Message type unknown' }] },
      { ...base(), type: 'system', system: { body: 'Ada changed their phone number', type: 'user_changed_number' } },
      {
        ...base(),
        type: 'document',
        document: { id: '1004', mime_type: 'application/pdf', filename: 'referral.pdf', caption: 'My referral' },
      },
    ];
    const res = await postSigned(t, whatsapp, whatsappBody(messages));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ stored: 11, skipped: 1 });
    const { conversation, items } = await shown('whatsapp', from);
    expect(items).toEqual([
      ['Confirm appointment', []],
      ['Yes', []],
      ['Tuesday 10:00', []],
      ['', ['voice']],
      ['My knee', ['video']],
      ['', ['sticker']],
      ['📍 Location: 52.52, 13.405 — Clinic, Main St 1, Berlin', []],
      ['Contact card: Mum, +49 151 1234567', []],
      ['[Unsupported message type]', []],
      ['[System message] Ada changed their phone number', []],
      ['My referral', ['document']],
    ]);
    expect(conversation.unreadCount).toBe(11);
    // The patient's own number stays theirs (a contact card is someone else's).
    expect(conversation.contact.phone).toBe(`+${from}`);
    const voice = (await api('GET', `/channels/messages?conversationId=${conversation.id}&limit=100`))
      .json()
      .items.find((m: Message) => m.attachments[0]?.type === 'voice');
    expect(voice.attachments[0]).toEqual({ type: 'voice', mimeType: 'audio/ogg; codecs=opus' });
  });

  it('WhatsApp: a voice note alone previews as [Voice message]', async () => {
    const whatsapp = connections.get('whatsapp')!;
    const from = senderId('whatsapp');
    const voice = {
      from,
      id: providerId('whatsapp'),
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: 'audio',
      audio: { id: '9', mime_type: 'audio/ogg', voice: true },
    };
    expect((await postSigned(t, whatsapp, whatsappBody([voice]))).statusCode).toBe(200);
    expect((await conversationWith('whatsapp', from))?.lastMessage?.text).toBe('[Voice message]');
  });

  it('Telegram: voice, video notes, stickers, videos, locations and contact cards; a poll says it cannot be shown', async () => {
    const telegram = connections.get('telegram')!;
    const from = Number(senderId('telegram'));
    const updates = [
      { voice: { file_id: 'v1', file_unique_id: 'u1', duration: 4, mime_type: 'audio/ogg' } },
      { video_note: { file_id: 'vn1', file_unique_id: 'u2', length: 240, duration: 6 } },
      {
        sticker: {
          file_id: 's1',
          file_unique_id: 'u3',
          type: 'regular',
          width: 512,
          height: 512,
          is_animated: false,
          is_video: false,
          emoji: '😀',
        },
      },
      {
        video: { file_id: 'vd1', file_unique_id: 'u4', width: 1, height: 1, duration: 3, mime_type: 'video/mp4' },
        caption: 'Rash on my arm',
      },
      { location: { latitude: 48.8584, longitude: 2.2945 } },
      {
        location: { latitude: 48.8584, longitude: 2.2945 },
        venue: { location: { latitude: 48.8584, longitude: 2.2945 }, title: 'Eiffel Tower', address: 'Champ de Mars' },
      },
      { contact: { phone_number: '+33612345678', first_name: 'Jean', last_name: 'Dupont', user_id: 4242 } },
      { poll: { id: 'p1', question: 'Which day?', options: [], is_anonymous: true, type: 'regular' } },
    ];
    for (const message of updates) {
      const res = await postSigned(t, telegram, telegramUpdate(from, message));
      expect(res.statusCode, res.body).toBe(200);
    }
    const { items } = await shown('telegram', String(from));
    expect(items).toEqual([
      ['', ['voice']],
      ['', ['video_note']],
      ['', ['sticker']],
      ['Rash on my arm', ['video']],
      ['📍 Location: 48.8584, 2.2945', []],
      ['📍 Location: 48.8584, 2.2945 — Eiffel Tower, Champ de Mars', []],
      ['Contact card: Jean Dupont, +33612345678', []],
      ['[Unsupported message type]', []],
    ]);
  });

  it('Viber: a location and a contact card are shown as words', async () => {
    const viber = connections.get('viber')!;
    const from = senderId('viber');
    for (const message of [
      { type: 'location', location: { lat: 50.4501, lon: 30.5234 } },
      { type: 'contact', contact: { name: 'Olena', phone_number: '+380501234567' } },
      {
        type: 'picture',
        media: 'https://dl-media.viber.com/x.jpg',
        text: 'Swelling',
        thumbnail: 'https://dl-media.viber.com/t.jpg',
      },
    ]) {
      const res = await postSigned(t, viber, viberMessage(from, message));
      expect(res.statusCode, res.body).toBe(200);
    }
    const { items } = await shown('viber', from);
    expect(items).toEqual([
      ['📍 Location: 50.4501, 30.5234', []],
      ['Contact card: Olena, +380501234567', []],
      ['Swelling', ['image']],
    ]);
  });

  it.each(['messenger', 'instagram'] as const)(
    '%s: a postback is what the patient pressed; a location and a voice clip are shown',
    async (channel) => {
      const connection = connections.get(channel)!;
      const from = senderId(channel);
      const at = Date.now();
      const postback = {
        sender: { id: from },
        recipient: { id: connection.credentials.pageId },
        timestamp: at,
        postback: { mid: providerId(channel), title: 'Book an appointment', payload: 'BOOK' },
      };
      const res = await postSigned(
        t,
        connection,
        pageBody(channel, [
          postback,
          {
            sender: { id: from },
            recipient: { id: connection.credentials.pageId },
            timestamp: at + 1,
            message: {
              mid: providerId(channel),
              attachments: [{ type: 'audio', payload: { url: 'https://cdn.fbsbx.com/v/audioclip.mp4' } }],
            },
          },
          {
            sender: { id: from },
            recipient: { id: connection.credentials.pageId },
            timestamp: at + 2,
            message: {
              mid: providerId(channel),
              attachments: [
                { type: 'location', title: 'Clinic', payload: { coordinates: { lat: 40.7128, long: -74.006 } } },
              ],
            },
          },
          {
            sender: { id: from },
            recipient: { id: connection.credentials.pageId },
            timestamp: at + 3,
            reaction: { mid: 'm_x', action: 'react', emoji: '❤' },
          },
        ]),
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ stored: 3, skipped: 1 });
      // A retry of the same postback is stored once.
      expect((await postSigned(t, connection, pageBody(channel, [postback]))).json()).toMatchObject({ stored: 0 });
      const { items } = await shown(channel, from);
      expect(items).toEqual([
        ['Book an appointment', []],
        ['', ['audio']],
        ['📍 Location: 40.7128, -74.006 — Clinic', []],
      ]);
    },
  );
});

describe("a shared contact card is not the patient's own number", () => {
  it("Telegram: another person's card leaves the contact's number alone; the patient's own card sets it", async () => {
    const telegram = connections.get('telegram')!;
    const from = Number(senderId('telegram'));
    const card = (phone: string, userId?: number) =>
      telegramUpdate(from, {
        contact: { phone_number: phone, first_name: 'Someone', ...(userId ? { user_id: userId } : {}) },
      });
    expect((await postSigned(t, telegram, card('+447700900001', from + 1))).statusCode).toBe(200);
    expect((await postSigned(t, telegram, card('+447700900002'))).statusCode).toBe(200);
    expect((await conversationWith('telegram', String(from)))?.contact.phone).toBeNull();
    expect((await postSigned(t, telegram, card('+447700900123', from))).statusCode).toBe(200);
    expect((await conversationWith('telegram', String(from)))?.contact.phone).toBe('+447700900123');
    // A card shared later (a relative's) does not replace it.
    expect((await postSigned(t, telegram, card('+447700900003', from + 2))).statusCode).toBe(200);
    const conversation = (await conversationWith('telegram', String(from)))!;
    expect(conversation.contact.phone).toBe('+447700900123');
    expect(conversation.lastMessage?.text).toBe('Contact card: Someone, +447700900003');
  });

  it('Viber: a contact card never sets the contact’s number', async () => {
    const viber = connections.get('viber')!;
    const from = senderId('viber');
    const res = await postSigned(
      t,
      viber,
      viberMessage(from, { type: 'contact', contact: { name: 'Dad', phone_number: '+380671112233' } }),
    );
    expect(res.statusCode).toBe(200);
    const conversation = (await conversationWith('viber', from))!;
    expect(conversation.contact.phone).toBeNull();
    expect(conversation.lastMessage?.text).toBe('Contact card: Dad, +380671112233');
  });
});

describe('a status report that overtakes the answer to the send', () => {
  const fault = (emulator: string, body: unknown) =>
    t.request({
      method: 'POST',
      url: `/_emulators/${emulator}/faults`,
      payload: { operation: 'messages.send', status: 200, body },
    });
  const pendingRows = async (providerMessageId: string) =>
    (
      await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ status: string }>(
          tx,
          sql`SELECT status FROM channel_pending_statuses WHERE provider_message_id = ${providerMessageId}`,
        ),
      )
    ).map((r) => r.status);

  it('WhatsApp: a failed report that came first makes the reply failed, with its words, once the id is known', async () => {
    const whatsapp = connections.get('whatsapp')!;
    const from = senderId('whatsapp');
    expect((await postSigned(t, whatsapp, whatsappBody([waText(from, 'Hello?')]))).statusCode).toBe(200);
    const conversation = (await conversationWith('whatsapp', from))!;
    const wamid = providerId('whatsapp');
    const report = await postSigned(
      t,
      whatsapp,
      whatsappBody([], {
        messages: undefined,
        statuses: [
          {
            id: wamid,
            status: 'failed',
            timestamp: String(Math.floor(Date.now() / 1000)),
            recipient_id: from,
            errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable' }],
          },
        ],
      }),
    );
    expect(report.statusCode, report.body).toBe(200);
    expect(await pendingRows(wamid)).toEqual(['failed']);
    await fault('meta', {
      messaging_product: 'whatsapp',
      contacts: [{ input: from, wa_id: from }],
      messages: [{ id: wamid }],
    });
    const sent = await api('POST', `/channels/conversations/${conversation.id}/messages`, {
      text: 'We can see you at 3',
    });
    expect(sent.statusCode, sent.body).toBe(201);
    expect(sent.json()).toMatchObject({ providerMessageId: wamid, status: 'failed' });
    expect(sent.json().error).toContain('Message undeliverable');
    expect(await statusOf(sent.json().id)).toBe('failed');
    expect(await pendingRows(wamid)).toEqual([]);
  });

  it('Viber: delivered and seen that came first move the reply on; an hour-old report is pruned, never applied', async () => {
    const viber = connections.get('viber')!;
    const from = senderId('viber');
    expect((await postSigned(t, viber, viberMessage(from, { type: 'text', text: 'Hi' }))).statusCode).toBe(200);
    const conversation = (await conversationWith('viber', from))!;
    const token = providerId('viber');
    for (const event of ['delivered', 'seen'])
      expect(
        (
          await postSigned(
            t,
            viber,
            `{"event":"${event}","timestamp":${Date.now()},"chat_hostname":"SN-CHAT-05_","message_token":${token},"user_id":${JSON.stringify(from)}}`,
          )
        ).statusCode,
      ).toBe(200);
    await fault('viber', { status: 0, status_message: 'ok', message_token: token });
    const sent = await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'See you!' });
    expect(sent.json()).toMatchObject({ providerMessageId: token, status: 'read' });

    // A report about an id we never sent (another tool on the number), or one that waited too long.
    const stale = providerId('viber');
    await postSigned(
      t,
      viber,
      `{"event":"failed","timestamp":${Date.now()},"message_token":${stale},"user_id":${JSON.stringify(from)},"desc":"x"}`,
    );
    expect(await pendingRows(stale)).toEqual(['failed']);
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows(
        tx,
        sql`UPDATE channel_pending_statuses SET received_at = now() - interval '61 minutes' WHERE provider_message_id = ${stale} RETURNING 1`,
      ),
    );
    await fault('viber', { status: 0, status_message: 'ok', message_token: stale });
    const late = await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Still there?' });
    expect(late.json()).toMatchObject({ providerMessageId: stale, status: 'sent' });
    const other = providerId('viber');
    await postSigned(t, viber, `{"event":"delivered","timestamp":${Date.now()},"message_token":${other}}`);
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows(
        tx,
        sql`UPDATE channel_pending_statuses SET received_at = now() - interval '61 minutes' WHERE provider_message_id = ${other} RETURNING 1`,
      ),
    );
    expect(await prunePendingStatuses(t.app.atrium)).toBeGreaterThanOrEqual(1);
    expect(await pendingRows(other)).toEqual([]);
  });
});

// A report and the send's answer at the same moment, on two connections of the server (PGlite runs one
// transaction at a time, so there they cannot interleave). The report's transaction is held open by a row
// lock the test takes on another reply that the same notification reports on, so each ordering is forced:
// (a) the report's UPDATE has looked (and found no message with that id) while the reply stores it and
// commits; (b) the report's pending row is written but not committed while the reply looks for it.
describe.skipIf(!TEST_SERVER_URL)('a status report racing the answer to the send', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Backends of this database waiting on a lock of this kind (a row's `transactionid`, or `advisory`). */
  const waiting = async (locktype: 'transactionid' | 'advisory') =>
    (
      await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ n: number }>(
          tx,
          sql`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
               WHERE NOT l.granted AND l.locktype = ${locktype} AND a.datname = current_database()`,
        ),
      )
    )[0].n;
  const until = async (done: () => Promise<boolean> | boolean, what: string) => {
    for (let i = 0; i < 500; i++) {
      if (await done()) return;
      await sleep(10);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const row = async (id: string) =>
    (
      await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ status: string; provider_message_id: string | null }>(
          tx,
          sql`SELECT status, provider_message_id FROM channel_messages WHERE id = ${id}`,
        ),
      )
    )[0];
  const pending = async (pid: string) =>
    (
      await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ status: string }>(
          tx,
          sql`SELECT status FROM channel_pending_statuses WHERE provider_message_id = ${pid}`,
        ),
      )
    ).map((r) => r.status);

  it.each([
    // (a) One delivery naming both: its UPDATE looks for X (none yet), then waits on Y's row lock.
    ['(a) the report looked before the id was stored', (x: string, y: string) => [{ delivery: { mids: [x, y] } }]],
    // (b) X's report is kept as pending (not committed), then the next item waits on Y's row lock.
    [
      '(b) the pending report was not committed when the reply looked',
      (x: string, y: string) => [{ delivery: { mids: [x] } }, { delivery: { mids: [y] } }],
    ],
  ] as const)('Messenger %s: the reply still ends delivered', async (_name, items) => {
    const messenger = connections.get('messenger')!;
    const from = senderId('messenger');
    expect(
      (await postSigned(t, messenger, pageBody('messenger', [pageText('messenger', from, 'Hi')]))).statusCode,
    ).toBe(200);
    const conversation = (await conversationWith('messenger', from))!;
    const [earlier] = await replies(conversation.id, ['First']);
    const x = `m_race_${providerId('messenger')}`;
    // The test holds the earlier reply's row: the report's transaction waits there, open, until released.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held!: () => void;
    const holding = new Promise<void>((resolve) => {
      held = resolve;
    });
    const holder = withSystem(t.app.atrium.db, async (tx) => {
      await queryRows(tx, sql`SELECT id FROM channel_messages WHERE id = ${earlier.id} FOR UPDATE`);
      held();
      await released;
    });
    await holding;
    const report = postSigned(
      t,
      messenger,
      pageBody(
        'messenger',
        items(x, earlier.providerMessageId).map((item) => ({
          sender: { id: from },
          recipient: { id: messenger.credentials.pageId },
          timestamp: Date.now(),
          ...item,
        })),
      ),
    );
    await until(async () => (await waiting('transactionid')) > 0, 'the report to wait on the held row');
    // The send answers with X now: the reply stores it (before the fix, and commits) or waits for the report.
    await t.request({
      method: 'POST',
      url: '/_emulators/meta/faults',
      payload: { operation: 'messages.send', status: 200, body: { recipient_id: from, message_id: x } },
    });
    let answered = false;
    const sending = api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Second' }).then((r) => {
      answered = true;
      return r;
    });
    await until(async () => answered || (await waiting('advisory')) > 0, 'the reply to commit or wait for the report');
    release();
    await holder;
    expect((await report).statusCode).toBe(200);
    const sent = await sending;
    expect(sent.statusCode, sent.body).toBe(201);
    expect(await row(sent.json().id)).toEqual({ status: 'delivered', provider_message_id: x });
    expect(await pending(x)).toEqual([]);
    expect((await row(earlier.id)).status).toBe('delivered');
  });
});

describe('failure reasons', () => {
  it("WhatsApp keeps the error's code and details; the common codes read as what to do, and whether Retry helps", async () => {
    const whatsapp = connections.get('whatsapp')!;
    const from = senderId('whatsapp');
    expect((await postSigned(t, whatsapp, whatsappBody([waText(from, 'Hello')]))).statusCode).toBe(200);
    const conversation = (await conversationWith('whatsapp', from))!;
    const [reply] = await replies(conversation.id, ['Your appointment is confirmed']);
    const report = await postSigned(
      t,
      whatsapp,
      whatsappBody([], {
        messages: undefined,
        statuses: [
          {
            id: reply.providerMessageId,
            status: 'failed',
            timestamp: String(Math.floor(Date.now() / 1000)),
            recipient_id: from,
            errors: [
              {
                code: 131047,
                title: 'Re-engagement message',
                message: 'Re-engagement message',
                error_data: {
                  details:
                    'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
                },
                href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
              },
            ],
          },
        ],
      }),
    );
    expect(report.statusCode, report.body).toBe(200);
    const failed = (await api('GET', `/channels/messages?conversationId=${conversation.id}`))
      .json()
      .items.find((m: Message) => m.id === reply.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      'WhatsApp could not deliver the message (code 131047: Re-engagement message — Message failed to send because more than 24 hours have passed since the customer last replied to this number.)',
    );
    expect(explainFailure('whatsapp', failed.error)).toEqual({
      summary: expect.stringContaining('More than 24 hours have passed since the patient last wrote'),
      retryable: false,
    });
  });

  it('explains the common refusals of each provider', () => {
    const cases: [string, string, string, boolean][] = [
      [
        'whatsapp',
        'WhatsApp refused the message (400, code 131026: (#131026) Message undeliverable)',
        'may not be on WhatsApp',
        false,
      ],
      ['sms', 'Twilio could not deliver the message (error 30003)', 'switched off', true],
      ['sms', 'Twilio could not deliver the message (error 30005)', 'does not exist', false],
      ['sms', 'Twilio could not deliver the message (error 30006)', 'landline', false],
      ['sms', 'Twilio could not deliver the message (error 30007)', 'spam', false],
      ['telegram', 'Telegram refused the message (403: Forbidden: bot was blocked by the user)', 'blocked', false],
      ['viber', 'Viber refused the message (status 6: receiverNotSubscribed)', 'unsubscribed', false],
      ['telegram', 'Telegram refused the message (500: Internal Server Error)', 'Telegram refused it.', true],
      ['viber', 'Viber could not deliver the message', 'Viber could not deliver it.', true],
    ];
    for (const [channel, error, words, retryable] of cases) {
      const explained = explainFailure(channel, error);
      expect(explained.summary, error).toContain(words);
      expect(explained.retryable, error).toBe(retryable);
    }
  });
});
