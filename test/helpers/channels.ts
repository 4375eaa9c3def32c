// Test helpers for the channels: credentials per channel, provider-shaped payloads, and each
// provider's signature, so receivers are exercised exactly as the provider would call them.
import { createHmac, randomBytes } from 'node:crypto';
import { twilioSignature } from '../../src/modules/channels/index.js';
import type { TestApp } from './app.js';

export type Channel = 'telegram' | 'whatsapp' | 'messenger' | 'instagram' | 'viber' | 'sms';
export const CHANNELS: Channel[] = ['telegram', 'whatsapp', 'messenger', 'instagram', 'viber', 'sms'];

const hex = (n: number) => randomBytes(n).toString('hex');

export function credentialsFor(channel: Channel): Record<string, string> {
  switch (channel) {
    case 'telegram':
      return { botToken: `${Date.now() % 1e9}:AA${hex(16)}`, secretToken: `sec_${hex(12)}` };
    case 'whatsapp':
      return {
        appSecret: hex(16),
        verifyToken: `verify-${hex(6)}`,
        accessToken: `EAAG${hex(20)}`,
        phoneNumberId: '109876543210',
      };
    case 'messenger':
    case 'instagram':
      return {
        appSecret: hex(16),
        verifyToken: `verify-${hex(6)}`,
        accessToken: `EAAG${hex(20)}`,
        pageId: '2233445566',
      };
    case 'viber':
      return { authToken: `4453b6ac${hex(16)}` };
    case 'sms':
      return { accountSid: `AC${hex(16)}`, authToken: hex(16), phoneNumber: '+15005550006' };
  }
}

export interface Connected {
  id: string;
  channel: Channel;
  webhookUrl: string;
  credentials: Record<string, string>;
}

export async function connectChannel(
  t: TestApp,
  token: string,
  channel: Channel,
  name = `${channel} line`,
): Promise<Connected> {
  const credentials = credentialsFor(channel);
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/channels',
    token,
    payload: { channel, name, credentials },
  });
  if (res.statusCode !== 201) throw new Error(`connect ${channel}: ${res.statusCode} ${res.body}`);
  return { ...res.json(), credentials };
}

export interface InboundSpec {
  /** The provider's message id (Telegram: the update id). */
  id: string;
  from: string;
  text: string;
  name?: string;
  /** The provider's time of the message in ms (default now); in seconds where the provider counts them. */
  atMs?: number;
}

/** The provider's body for one inbound message: raw text and its content type. */
export function inboundPayload(
  channel: Channel,
  m: InboundSpec,
  credentials: Record<string, string>,
): { body: string; contentType: string } {
  const atMs = m.atMs ?? Date.now();
  const now = Math.floor(atMs / 1000);
  switch (channel) {
    case 'telegram':
      return {
        contentType: 'application/json',
        body: JSON.stringify({
          update_id: Number(m.id),
          message: {
            message_id: Number(m.id),
            date: now,
            chat: { id: Number(m.from), type: 'private' },
            from: { id: Number(m.from), is_bot: false, first_name: m.name ?? 'Pat' },
            text: m.text,
          },
        }),
      };
    case 'whatsapp':
      return {
        contentType: 'application/json',
        body: JSON.stringify({
          object: 'whatsapp_business_account',
          entry: [
            {
              id: '102290129340398',
              changes: [
                {
                  field: 'messages',
                  value: {
                    messaging_product: 'whatsapp',
                    metadata: { display_phone_number: '15550783881', phone_number_id: credentials.phoneNumberId },
                    contacts: [{ profile: { name: m.name ?? 'Pat' }, wa_id: m.from }],
                    messages: [
                      { from: m.from, id: m.id, timestamp: String(now), type: 'text', text: { body: m.text } },
                    ],
                  },
                },
              ],
            },
          ],
        }),
      };
    case 'messenger':
    case 'instagram':
      return {
        contentType: 'application/json',
        body: JSON.stringify({
          object: channel === 'messenger' ? 'page' : 'instagram',
          entry: [
            {
              id: credentials.pageId,
              time: Date.now(),
              messaging: [
                {
                  sender: { id: m.from },
                  recipient: { id: credentials.pageId },
                  timestamp: atMs,
                  message: { mid: m.id, text: m.text },
                },
              ],
            },
          ],
        }),
      };
    case 'viber':
      // The token is written as a bare JSON number, as Viber does (it may exceed 2^53).
      return {
        contentType: 'application/json',
        body: `{"event":"message","timestamp":${atMs},"chat_hostname":"SN-CHAT-05_","message_token":${m.id},"sender":{"id":${JSON.stringify(m.from)},"name":${JSON.stringify(m.name ?? 'Pat')},"api_version":10},"message":{"text":${JSON.stringify(m.text)},"type":"text"},"silent":false}`,
      };
    case 'sms':
      return {
        contentType: 'application/x-www-form-urlencoded',
        body: new URLSearchParams({
          ToCountry: 'US',
          SmsMessageSid: m.id,
          NumMedia: '0',
          SmsSid: m.id,
          SmsStatus: 'received',
          Body: m.text,
          To: credentials.phoneNumber,
          NumSegments: '1',
          MessageSid: m.id,
          AccountSid: credentials.accountSid,
          From: m.from,
          ApiVersion: '2010-04-01',
        }).toString(),
      };
  }
}

/** The headers the provider would send with `body` to `url`. */
export function signatureHeaders(
  channel: Channel,
  url: string,
  body: string,
  credentials: Record<string, string>,
): Record<string, string> {
  switch (channel) {
    case 'telegram':
      return { 'x-telegram-bot-api-secret-token': credentials.secretToken };
    case 'whatsapp':
    case 'messenger':
    case 'instagram':
      return {
        'x-hub-signature-256': `sha256=${createHmac('sha256', credentials.appSecret).update(body).digest('hex')}`,
      };
    case 'viber':
      return { 'x-viber-content-signature': createHmac('sha256', credentials.authToken).update(body).digest('hex') };
    case 'sms': {
      const params = Object.fromEntries(new URLSearchParams(body));
      return { 'x-twilio-signature': twilioSignature(credentials.authToken, url, params) };
    }
  }
}

/** A fresh provider id of the channel's form. */
export function providerId(channel: Channel): string {
  switch (channel) {
    case 'telegram':
      return String(100000 + Math.floor(Math.random() * 1e8));
    case 'whatsapp':
      return `wamid.HBgL${hex(16)}`;
    case 'messenger':
    case 'instagram':
      return `m_${hex(20)}`;
    case 'viber':
      return (5_000_000_000_000_000_000n + BigInt(`0x${hex(6)}`)).toString();
    case 'sms':
      return `SM${hex(16)}`;
  }
}

export function senderId(channel: Channel): string {
  switch (channel) {
    case 'telegram':
      return String(200000000 + Math.floor(Math.random() * 1e6));
    case 'whatsapp':
      return `1650555${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')}`;
    case 'messenger':
    case 'instagram':
      return String(6000000000000000 + Math.floor(Math.random() * 1e9));
    case 'viber':
      return `${hex(8)}==`;
    case 'sms':
      return `+1415555${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')}`;
  }
}

/** Posts a signed (or, with `tamper`, altered) callback to the connection's webhook. */
export async function deliver(
  t: TestApp,
  connection: Connected,
  m: InboundSpec,
  options: { sign?: boolean; tamper?: boolean; connectionId?: string } = {},
) {
  const { body, contentType } = inboundPayload(connection.channel, m, connection.credentials);
  const path = `/api/v1/${connection.channel}/webhook?connection=${options.connectionId ?? connection.id}`;
  const headers: Record<string, string> =
    options.sign === false
      ? {}
      : signatureHeaders(connection.channel, `${t.app.atrium.selfUrl()}${path}`, body, connection.credentials);
  // Telegram's check is a shared secret header, not a body signature: its forgery is a wrong secret.
  if (options.tamper && connection.channel === 'telegram')
    headers['x-telegram-bot-api-secret-token'] = 'forged-secret-token-x';
  const tampered = connection.channel === 'sms' ? body.replace('Body=', 'Body=X') : body.replace(m.text, `${m.text}!`);
  const sent = options.tamper && connection.channel !== 'telegram' ? tampered : body;
  if (options.tamper && sent === body && connection.channel !== 'telegram') throw new Error('tamper changed nothing');
  return t.request({ method: 'POST', url: path, headers: { 'content-type': contentType, ...headers }, payload: sent });
}

/** Posts `body` to the connection's webhook, signed as its provider signs (any payload: status reports, malformed ones). */
export function postSigned(
  t: TestApp,
  connection: Pick<Connected, 'id' | 'channel' | 'credentials'>,
  body: string,
  contentType = connection.channel === 'sms' ? 'application/x-www-form-urlencoded' : 'application/json',
) {
  const path = `/api/v1/${connection.channel}/webhook?connection=${connection.id}`;
  return t.request({
    method: 'POST',
    url: path,
    headers: {
      'content-type': contentType,
      ...signatureHeaders(connection.channel, `${t.app.atrium.selfUrl()}${path}`, body, connection.credentials),
    },
    payload: body,
  });
}
