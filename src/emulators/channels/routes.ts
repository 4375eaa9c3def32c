// Channel emulators (contract §11): Telegram Bot API, Meta Graph (WhatsApp, Messenger, Instagram),
// Viber REST bot API and Twilio Messaging, speaking each provider's paths, bodies and error shapes.
// Each records what was sent (`GET /sent` → {items: [{to, text, at, …}]}) in the database and takes
// faults (`messages.send`; Telegram also `setWebhook`; Meta also `profile.get`). Telegram keeps the webhook a bot registered
// and can deliver a user's message to it (`POST /simulate`), signed as Telegram signs it; Twilio
// reports delivery to the StatusCallback, signed with the account's token, as Twilio does. Meta knows
// the people who write to its pages (`POST /users`, `POST /simulate`) and tells their names to Graph's
// profile read (`GET /{version}/{id}?fields=`), recording each read (`GET /lookups`).
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { twilioSignature } from '../../modules/channels/index.js';
import { noContent } from '../../platform/http-schemas.js';
import { readDoc, updateDoc } from '../calendar/store.js';
import { applyFault, type Fault, FaultBook, registerFaultRoutes } from '../faults.js';

interface Sent {
  id: string;
  to: string;
  text: string;
  at: string;
  account?: string;
}
interface SentDoc {
  items: Sent[];
}
const SENT = 'sent';
const sentList = z.object({
  items: z.array(
    z.object({
      id: z.string().describe("The provider's id of the message"),
      to: z.string().describe('The recipient as the send call named it (chat id, phone number, user id)'),
      text: z.string(),
      at: z.string().describe('When it was sent (RFC 3339)'),
      account: z.string().optional().describe('The Twilio account it was sent from'),
    }),
  ),
});
const initialSent = (): SentDoc => ({ items: [] });
/** The send API each channel emulator stands in for (the OpenAPI summaries). */
const SEND_API: Record<string, string> = {
  telegram: 'Telegram Bot API',
  meta: 'Graph API (WhatsApp, Messenger, Instagram)',
  viber: 'Viber REST bot API',
  twilio: 'Twilio Messaging API',
};

async function record(fastify: FastifyInstance, emulator: string, sent: Sent): Promise<void> {
  await updateDoc(fastify.atrium.db, emulator, SENT, initialSent, (doc: SentDoc) => {
    doc.items = [...doc.items.slice(-999), sent];
  });
}

function common(fastify: FastifyInstance, emulator: string): FaultBook {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  // The testing API of contract §11, documented like the other emulators' (faults, the mailbox).
  fastify.get(
    '/sent',
    {
      schema: {
        tags: ['emulators'],
        summary: `What was sent through the ${SEND_API[emulator] ?? emulator}, newest first (the last 1,000)`,
        querystring: z.object({ to: z.string().optional().describe('Only what was sent to this recipient') }),
        response: { 200: sentList },
      },
    },
    async (request) => {
      const to = (request.query as { to?: string }).to;
      const doc = await readDoc<SentDoc>(fastify.atrium.db, emulator, SENT);
      const items = [...(doc?.items ?? [])].reverse();
      return { items: to ? items.filter((i) => i.to === to) : items };
    },
  );
  fastify.delete(
    '/sent',
    { schema: { tags: ['emulators'], summary: 'Forget what was sent', response: { 204: noContent } } },
    async (_request, reply) => {
      await updateDoc(fastify.atrium.db, emulator, SENT, initialSent, (doc: SentDoc) => {
        doc.items = [];
      });
      return reply.status(204).send(null);
    },
  );
  return faults;
}

const text = (v: unknown, max = 4096) => (typeof v === 'string' ? v.slice(0, max) : '');

// ---------------------------------------------------------------- Telegram

interface Hook {
  url: string;
  secret: string;
  nextUpdate: number;
}

export async function telegramEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = common(fastify, 'telegram');
  const db = () => fastify.atrium.db;
  const refuse = (reply: FastifyReply, status: number, description: string) =>
    reply.status(status).send({ ok: false, error_code: status, description });
  /**
   * An injected fault in the Bot API's error shape. A 429 names its wait in the body only, as Telegram
   * does (`parameters.retry_after`, seconds; the fault's `body.parameters.retry_after`, default 1), and
   * sends no Retry-After header.
   */
  const refuseWithFault = (reply: FastifyReply, f: Fault, description: string) => {
    const asked = (f.body ?? {}) as { description?: string; parameters?: { retry_after?: unknown } };
    if (f.status !== 429) return refuse(reply, f.status!, asked.description ?? description);
    const retryAfter = typeof asked.parameters?.retry_after === 'number' ? asked.parameters.retry_after : 1;
    return reply.status(429).send({
      ok: false,
      error_code: 429,
      description: asked.description ?? `Too Many Requests: retry after ${retryAfter}`,
      parameters: { retry_after: retryAfter },
    });
  };
  const tokenOf = (params: unknown) => {
    const raw = (params as { token: string }).token;
    return /^bot\d+:[\w-]{10,}$/.test(raw) ? raw.slice(3) : undefined;
  };

  fastify.post('/:token/setWebhook', { schema: { hide: true } }, async (request, reply) => {
    const token = tokenOf(request.params);
    if (!token) return refuse(reply, 401, 'Unauthorized');
    const f = await applyFault(faults, 'setWebhook');
    if (f) return refuseWithFault(reply, f, 'Bad Request: injected fault');
    const body = (request.body ?? {}) as { url?: unknown; secret_token?: unknown };
    if (!text(body.url).startsWith('http'))
      return refuse(reply, 400, 'Bad Request: bad webhook: An HTTPS URL must be provided');
    await updateDoc(
      db(),
      'telegram',
      `hook:${token}`,
      () => ({ url: '', secret: '', nextUpdate: 1 }),
      (hook: Hook) => {
        hook.url = text(body.url, 2000);
        hook.secret = text(body.secret_token, 256);
      },
    );
    return { ok: true, result: true, description: 'Webhook was set' };
  });

  fastify.post('/:token/sendMessage', { schema: { hide: true } }, async (request, reply) => {
    const token = tokenOf(request.params);
    if (!token) return refuse(reply, 401, 'Unauthorized');
    const f = await applyFault(faults, 'messages.send');
    if (f) return refuseWithFault(reply, f, 'Forbidden: bot was blocked by the user');
    const body = (request.body ?? {}) as { chat_id?: unknown; text?: unknown };
    if (body.chat_id === undefined || !text(body.text)) return refuse(reply, 400, 'Bad Request: message text is empty');
    const messageId = Number.parseInt(randomBytes(3).toString('hex'), 16);
    await record(fastify, 'telegram', {
      id: String(messageId),
      to: String(body.chat_id),
      text: text(body.text),
      at: new Date().toISOString(),
      account: token.split(':')[0],
    });
    return {
      ok: true,
      result: {
        message_id: messageId,
        date: Math.floor(Date.now() / 1000),
        chat: { id: body.chat_id },
        text: body.text,
      },
    };
  });

  /** A user writes to the bot: the emulator posts the Update to the bot's webhook with its secret. */
  fastify.post('/simulate', { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as {
      botToken?: string;
      chatId?: number;
      firstName?: string;
      lastName?: string;
      text?: string;
    };
    const token = text(body.botToken, 200);
    const hook = await readDoc<Hook>(db(), 'telegram', `hook:${token}`);
    if (!hook?.url) return reply.status(404).send({ ok: false, description: 'No webhook set for this bot' });
    const updateId = await updateDoc(
      db(),
      'telegram',
      `hook:${token}`,
      () => hook,
      (h: Hook) => h.nextUpdate++,
    );
    const chatId = Number(body.chatId ?? 100200300);
    const update = {
      update_id: updateId,
      message: {
        message_id: updateId,
        date: Math.floor(Date.now() / 1000),
        chat: { id: chatId, type: 'private', first_name: body.firstName },
        from: { id: chatId, is_bot: false, first_name: body.firstName ?? 'Telegram', last_name: body.lastName },
        text: text(body.text) || 'Hello',
      },
    };
    const res = await fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': hook.secret },
      body: JSON.stringify(update),
    });
    return { delivered: res.ok, status: res.status, update };
  });
}

// ---------------------------------------------------------------- Meta Graph

export async function metaEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = common(fastify, 'meta');
  const oauthError = (reply: FastifyReply, status: number, message: string, code = 190) =>
    reply
      .status(status)
      .send({ error: { message, type: 'OAuthException', code, fbtrace_id: randomBytes(6).toString('hex') } });
  const authed = (authorization: string | undefined) => /^Bearer \S{8,}/.test(authorization ?? '');

  // Graph's token endpoint (long-lived token exchange): a token that cannot be valid gets
  // OAuthException code 190, as Graph answers; the channels' health probe calls it every run.
  fastify.get('/:version/oauth/access_token', { schema: { hide: true } }, async (request, reply) => {
    const f = await applyFault(faults, 'token');
    if (f) return oauthError(reply, f.status!, 'An unexpected error has occurred. Please retry your request later.', 2);
    const q = request.query as {
      grant_type?: string;
      client_id?: string;
      client_secret?: string;
      fb_exchange_token?: string;
    };
    if (q.grant_type !== 'fb_exchange_token' || !q.client_id || !q.client_secret) {
      return oauthError(reply, 400, 'Missing grant_type, client_id or client_secret', 100);
    }
    if (!q.fb_exchange_token?.startsWith('EAAG'))
      return oauthError(reply, 400, 'Invalid OAuth access token - Cannot parse access token');
    return {
      access_token: `EAAG${randomBytes(24).toString('base64url')}`,
      token_type: 'bearer',
      expires_in: 5_184_000,
    };
  });

  fastify.post('/:version/:node/messages', { schema: { hide: true } }, async (request, reply) => {
    const { node } = request.params as { version: string; node: string };
    if (!authed(request.headers.authorization))
      return oauthError(reply, 401, 'Invalid OAuth access token - Cannot parse access token');
    const f = await applyFault(faults, 'messages.send');
    if (f) {
      return reply
        .status(f.status!)
        .send(
          f.body ?? { error: { message: '(#131026) Message undeliverable', type: 'OAuthException', code: 131026 } },
        );
    }
    const body = (request.body ?? {}) as {
      messaging_product?: string;
      to?: string;
      text?: { body?: string };
      recipient?: { id?: string };
      message?: { text?: string };
    };
    if (node === 'me') {
      const to = text(body.recipient?.id, 100);
      const messageText = text(body.message?.text);
      if (!to || !messageText) return oauthError(reply, 400, '(#100) The parameter recipient is required', 100);
      const id = `m_${randomBytes(16).toString('base64url')}`;
      await record(fastify, 'meta', { id, to, text: messageText, at: new Date().toISOString() });
      return { recipient_id: to, message_id: id };
    }
    if (body.messaging_product !== 'whatsapp' || !body.to || !text(body.text?.body)) {
      return oauthError(reply, 400, '(#100) Invalid parameter', 100);
    }
    const id = `wamid.${randomBytes(24).toString('base64url')}`;
    await record(fastify, 'meta', {
      id,
      to: text(body.to, 30),
      text: text(body.text?.body),
      at: new Date().toISOString(),
      account: node,
    });
    return { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id }] };
  });

  // People who write to the emulated pages: the webhooks carry only their page-scoped id, and Graph tells
  // their name when asked (`GET /{version}/{id}?fields=`, the User Profile API). Registered with
  // `POST /users`, or by `POST /simulate`, which also delivers their message to a webhook, signed as Meta signs.
  const users = () => readDoc<UsersDoc>(fastify.atrium.db, 'meta', USERS);
  const addUser = (user: MetaUser) =>
    updateDoc(fastify.atrium.db, 'meta', USERS, initialUsers, (doc: UsersDoc) => {
      doc.items = { ...doc.items, [user.id]: user };
    });
  const userBody = (body: Record<string, unknown>, id: string): MetaUser => ({
    id,
    ...(text(body.firstName, 100) ? { first_name: text(body.firstName, 100) } : {}),
    ...(text(body.lastName, 100) ? { last_name: text(body.lastName, 100) } : {}),
    ...(text(body.name, 200) ? { name: text(body.name, 200) } : {}),
    ...(text(body.username, 100) ? { username: text(body.username, 100) } : {}),
  });
  const newPsid = () => String(6_000_000_000_000_000n + BigInt(Number.parseInt(randomBytes(4).toString('hex'), 16)));

  fastify.post('/users', { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const id = /^\d{1,40}$/.test(text(body.id, 40)) ? text(body.id, 40) : newPsid();
    const user = userBody(body, id);
    await addUser(user);
    return reply.status(201).send(user);
  });

  /** A person writes to a page (Messenger) or Instagram account: the notification is posted to `webhookUrl`. */
  fastify.post('/simulate', { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const url = text(body.webhookUrl, 2000);
    const appSecret = text(body.appSecret, 200);
    if (!url.startsWith('http') || !appSecret)
      return reply.status(400).send({ error: 'webhookUrl and appSecret are required' });
    const object = body.object === 'instagram' ? 'instagram' : 'page';
    const pageId = text(body.pageId, 40) || '2233445566';
    const senderId = /^\d{1,40}$/.test(text(body.senderId, 40)) ? text(body.senderId, 40) : newPsid();
    const user = userBody(body, senderId);
    await addUser(user);
    const mid = `m_${randomBytes(16).toString('base64url')}`;
    const now = Date.now();
    const payload = JSON.stringify({
      object,
      entry: [
        {
          id: pageId,
          time: now,
          messaging: [
            {
              sender: { id: senderId },
              recipient: { id: pageId },
              timestamp: now,
              message: { mid, text: text(body.text) || 'Hello' },
            },
          ],
        },
      ],
    });
    const signature = createHmac('sha256', appSecret).update(payload).digest('hex');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}` },
      body: payload,
    });
    return { delivered: res.ok, status: res.status, senderId, mid };
  });

  /** The profile reads answered (ids and fields asked, never the token), newest first. */
  fastify.get('/lookups', { schema: { hide: true } }, async (request) => {
    const id = (request.query as { id?: string }).id;
    const doc = await readDoc<LookupsDoc>(fastify.atrium.db, 'meta', LOOKUPS);
    const items = [...(doc?.items ?? [])].reverse();
    return { items: id ? items.filter((i) => i.id === id) : items };
  });
  fastify.delete('/lookups', { schema: { hide: true } }, async (_request, reply) => {
    await updateDoc(fastify.atrium.db, 'meta', LOOKUPS, initialLookups, (doc: LookupsDoc) => {
      doc.items = [];
    });
    return reply.status(204).send();
  });

  // Graph's node read (the User Profile API for page- and Instagram-scoped ids). The token comes as
  // `access_token` or as `Authorization: Bearer`; the fields asked for that the person has are answered,
  // with `id`; an id no simulated person has is Graph's 100/33. Fault operation `profile.get`.
  fastify.get('/:version/:id', { schema: { hide: true } }, async (request, reply) => {
    const { id } = request.params as { version: string; id: string };
    const q = request.query as { fields?: string; access_token?: string };
    const token = q.access_token ?? /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token)
      return oauthError(
        reply,
        400,
        'An active access token must be used to query information about the current user.',
        2500,
      );
    if (token.length < 8) return oauthError(reply, 400, 'Invalid OAuth access token - Cannot parse access token');
    const fields = text(q.fields, 500)
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean);
    await updateDoc(fastify.atrium.db, 'meta', LOOKUPS, initialLookups, (doc: LookupsDoc) => {
      doc.items = [...doc.items.slice(-999), { id: text(id, 100), fields, at: new Date().toISOString() }];
    });
    const f = await applyFault(faults, 'profile.get', request);
    if (f) {
      return reply.status(f.status!).send(
        f.body ?? {
          error: {
            message: 'An unexpected error has occurred. Please retry your request later.',
            type: 'OAuthException',
            is_transient: true,
            code: 2,
            fbtrace_id: randomBytes(6).toString('hex'),
          },
        },
      );
    }
    const user = (await users())?.items[id];
    if (!user) {
      // Graph's answer for an id that does not exist or that this token may not read.
      return reply.status(400).send({
        error: {
          message: `Unsupported get request. Object with ID '${text(id, 100)}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
          type: 'GraphMethodException',
          code: 100,
          error_subcode: 33,
          fbtrace_id: randomBytes(6).toString('hex'),
        },
      });
    }
    const known = user as unknown as Record<string, string | undefined>;
    const answer: Record<string, string> = { id: user.id };
    for (const field of fields.length ? fields : ['name']) {
      const value = known[field];
      if (field !== 'id' && value !== undefined) answer[field] = value;
    }
    return answer;
  });
}

interface MetaUser {
  id: string;
  first_name?: string;
  last_name?: string;
  name?: string;
  username?: string;
}
interface UsersDoc {
  items: Record<string, MetaUser>;
}
const USERS = 'users';
const initialUsers = (): UsersDoc => ({ items: {} });
interface LookupsDoc {
  items: { id: string; fields: string[]; at: string }[];
}
const LOOKUPS = 'lookups';
const initialLookups = (): LookupsDoc => ({ items: [] });

// ---------------------------------------------------------------- Viber

export async function viberEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = common(fastify, 'viber');
  // Message tokens are 64-bit: past 2^53, as Viber's are, so a client that parses them as doubles loses digits.
  let next = 5741311803571721087n;
  fastify.post('/pa/send_message', { schema: { hide: true } }, async (request, reply) => {
    const token = request.headers['x-viber-auth-token'];
    if (typeof token !== 'string' || token.length < 16) return { status: 2, status_message: 'invalidAuthToken' };
    const f = await applyFault(faults, 'messages.send');
    if (f) return reply.status(f.status!).send(f.body ?? { status: 6, status_message: 'receiverNotSubscribed' });
    const body = (request.body ?? {}) as { receiver?: string; text?: string; type?: string };
    if (!body.receiver || body.type !== 'text' || !text(body.text)) return { status: 3, status_message: 'badData' };
    next += 1n + BigInt(Number.parseInt(randomBytes(2).toString('hex'), 16));
    const messageToken = next.toString();
    await record(fastify, 'viber', {
      id: messageToken,
      to: text(body.receiver, 100),
      text: text(body.text),
      at: new Date().toISOString(),
    });
    return reply
      .type('application/json')
      .send(`{"status":0,"status_message":"ok","message_token":${messageToken},"chat_hostname":"SN-CHAT-05_"}`);
  });
}

// ---------------------------------------------------------------- Twilio

export async function twilioEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = common(fastify, 'twilio');
  const twilioError = (reply: FastifyReply, status: number, code: number, message: string) =>
    reply.status(status).send({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

  fastify.post(
    '/2010-04-01/Accounts/:sid/Messages.json',
    { schema: { hide: true }, config: { formBody: true } },
    async (request, reply) => {
      const { sid } = request.params as { sid: string };
      const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      const [user, token] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [];
      if (user !== sid || !token) return twilioError(reply, 401, 20003, 'Authenticate');
      const f = await applyFault(faults, 'messages.send');
      if (f)
        return reply
          .status(f.status!)
          .send(f.body ?? { code: 21610, message: 'Attempt to send to unsubscribed recipient', status: f.status });
      const form = (request.body ?? {}) as Record<string, string>;
      if (!form.To || !form.From) return twilioError(reply, 400, 21604, "A 'To' phone number is required.");
      if (!form.Body) return twilioError(reply, 400, 21602, 'Message body is required.');
      const messageSid = `SM${randomBytes(16).toString('hex')}`;
      await record(fastify, 'twilio', {
        id: messageSid,
        to: form.To,
        text: text(form.Body, 1600),
        at: new Date().toISOString(),
        account: sid,
      });
      const callback = form.StatusCallback;
      if (callback?.startsWith('http')) {
        // Twilio reports delivery a moment later, signed with the account's auth token.
        const report = () => {
          const params: Record<string, string> = {
            AccountSid: sid,
            MessageSid: messageSid,
            MessageStatus: 'delivered',
            To: form.To,
            From: form.From,
          };
          const signature = twilioSignature(token, callback, params);
          return fetch(callback, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
            body: new URLSearchParams(params).toString(),
          }).catch(() => {});
        };
        // Fault `messages.callback-first`: the report reaches the sender before this answer does (it can).
        if (faults.take('messages.callback-first')) await report();
        else setTimeout(report, 50).unref();
      }
      return reply.status(201).send({
        sid: messageSid,
        account_sid: sid,
        to: form.To,
        from: form.From,
        body: form.Body,
        status: 'queued',
        direction: 'outbound-api',
        date_created: new Date().toUTCString(),
        uri: `/2010-04-01/Accounts/${sid}/Messages/${messageSid}.json`,
      });
    },
  );
}
