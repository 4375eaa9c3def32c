// The six channel receivers as their providers call them (contract §8): valid, tampered, unsigned,
// replayed, concurrent duplicates and unknown connections; replies through each provider's send API
// (emulated) with statuses; exact large ids; Meta's handshake; the patient link; Twilio's own example.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  CHANNELS,
  type Connected,
  connectChannel,
  deliver,
  postSigned,
  providerId,
  senderId,
} from '../../../test/helpers/channels.js';
import { TEST_SERVER_URL } from '../../../test/helpers/db.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { openSse } from '../../../test/helpers/sse.js';
import { queryRows, withSystem, withTenant } from '../../platform/db/tenant.js';
import { storeInbound } from './inbound.js';
import { type InboundMessage, twilioSignature } from './providers/index.js';
import { channelConnections } from './tables.js';

let t: TestApp;
let ws: TestWorkspace;
const connections = new Map<string, Connected>();

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, token = ws.admin.token) =>
  t.request({ method, url: `/api/v1${url}`, token, payload: payload as Record<string, unknown> });

const storedCount = async (providerMessageId: string) =>
  (
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ n: number }>(
        tx,
        sql`SELECT count(*)::int AS n FROM channel_messages WHERE provider_message_id = ${providerMessageId}`,
      ),
    )
  )[0].n;

/** The conversation of the workspace's channel with this sender (the newest 200 are looked at). */
const conversationWith = async (channel: string, externalId: string) =>
  (await api('GET', `/channels/conversations?channel=${channel}&limit=200`))
    .json()
    .items.find((c: { contact: { externalId: string } }) => c.contact.externalId === externalId);

const totalMessages = async () =>
  (
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM channel_messages WHERE workspace_id = ${ws.id}`),
    )
  )[0].n;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  for (const channel of CHANNELS) connections.set(channel, await connectChannel(t, ws.admin.token, channel));
}, 60_000);
afterAll(async () => t?.close());

describe('Twilio request signature', () => {
  it("matches Twilio's published example", () => {
    const params = {
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675309',
      Digits: '1234',
      From: '+14158675309',
      To: '+18005551212',
    };
    expect(twilioSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', params)).toBe(
      'RSOYDt4T1cUTdK1PDd93/VVr8B8=',
    );
  });
});

describe('connections', () => {
  it('lists without secrets, with the webhook URL to paste; Free is refused; bad credentials change nothing', async () => {
    const list = await api('GET', '/channels');
    expect(list.statusCode).toBe(200);
    expect(list.json().items).toHaveLength(6);
    expect(list.body).not.toContain(connections.get('viber')!.credentials.authToken);
    const tg = list.json().items.find((c: { channel: string }) => c.channel === 'telegram');
    expect(tg.webhookUrl).toBe(`${t.app.atrium.selfUrl()}/api/v1/telegram/webhook?connection=${tg.id}`);
    const free = await createWorkspace(t, { tier: 'free' });
    const refused = await api(
      'POST',
      '/channels',
      { channel: 'viber', name: 'x', credentials: { authToken: 'x'.repeat(20) } },
      free.admin.token,
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('tier_required');
    const bad = await api('POST', '/channels', { channel: 'sms', name: 'x', credentials: { accountSid: 'nope' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { path: string }) => e.path)).toContain('body.credentials.accountSid');
    // Each field's problem is named, in the provider's words, for the form to show beside the field.
    const badPage = await api('POST', '/channels', {
      channel: 'instagram',
      name: 'x',
      credentials: {
        appSecret: 'a'.repeat(20),
        verifyToken: 'v'.repeat(20),
        accessToken: 't'.repeat(20),
        pageId: 'my-page',
      },
    });
    expect(badPage.statusCode).toBe(400);
    expect(badPage.json().detail).toContain('Instagram');
    expect(badPage.json().errors).toEqual([
      { path: 'body.credentials.pageId', message: 'The page id is the number Meta shows, digits only' },
    ]);
    expect((await api('GET', '/channels')).json().items).toHaveLength(6);
  });

  it('Telegram is registered with the bot at once: setWebhook with the secret, and a user message arrives through it', async () => {
    const tg = connections.get('telegram')!;
    const simulated = await t.request({
      method: 'POST',
      url: '/_emulators/telegram/simulate',
      payload: {
        botToken: tg.credentials.botToken,
        chatId: 987654321,
        firstName: 'Grace',
        text: 'Is the clinic open Saturday?',
      },
    });
    expect(simulated.json()).toMatchObject({ delivered: true, status: 200 });
    const conversations = (await api('GET', '/channels/conversations?channel=telegram')).json().items;
    expect(
      conversations.find((c: { contact: { externalId: string } }) => c.contact.externalId === '987654321'),
    ).toMatchObject({
      contact: { name: 'Grace' },
      lastMessage: { text: 'Is the clinic open Saturday?' },
      unreadCount: 1,
    });
  });
});

describe.each(CHANNELS)('%s webhook', (channel) => {
  it('stores a verified message once: replays and concurrent duplicates are acknowledged, not stored again', async () => {
    const connection = connections.get(channel)!;
    const m = { id: providerId(channel), from: senderId(channel), text: `Hello from ${channel}`, name: 'Ada Lovelace' };
    const first = await deliver(t, connection, m);
    expect(first.statusCode, first.body).toBe(200);
    expect(await storedCount(m.id)).toBe(1);
    const replay = await deliver(t, connection, m);
    expect(replay.statusCode).toBe(200);
    const burst = await Promise.all(Array.from({ length: 8 }, () => deliver(t, connection, m)));
    expect(burst.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(await storedCount(m.id)).toBe(1);
    const messages = (await api('GET', `/channels/messages?channel=${channel}`)).json().items;
    const stored = messages.find((x: { providerMessageId: string }) => x.providerMessageId === m.id);
    // The provider's id exactly: Viber's 64-bit tokens keep every digit.
    expect(stored).toMatchObject({
      direction: 'in',
      text: `Hello from ${channel}`,
      status: 'received',
      providerMessageId: m.id,
    });
    const conversation = (await api('GET', `/channels/conversations?channel=${channel}`))
      .json()
      .items.find((c: { id: string }) => c.id === stored.conversationId);
    expect(conversation.unreadCount).toBe(1);
  });

  it('refuses tampered, unsigned and unknown-connection requests with 401 and stores nothing', async () => {
    const connection = connections.get(channel)!;
    const before = await totalMessages();
    const m = () => ({ id: providerId(channel), from: senderId(channel), text: 'Forged hello' });
    for (const res of [
      await deliver(t, connection, m(), { tamper: true }),
      await deliver(t, connection, m(), { sign: false }),
      await deliver(t, connection, m(), { connectionId: 'chn_01m8doesnotexist0000000000' }),
      await deliver(t, connection, m(), { connectionId: `chn_${'0'.repeat(300)}` }),
      await deliver(t, connection, m(), { connectionId: connections.get(channel === 'sms' ? 'viber' : 'sms')!.id }),
    ]) {
      expect(res.statusCode, res.body).toBe(401);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe('unauthenticated');
    }
    expect(await totalMessages()).toBe(before);
  });

  it.skipIf(channel === 'sms')(
    'files a verified message with a nonsense time at its arrival: never a 5xx, never lost',
    async () => {
      const connection = connections.get(channel)!;
      // Past what PostgreSQL holds either way, before 2000, and next year.
      for (const atMs of [8.64e15, -6.2e13, 1e11, Date.now() + 365 * 86_400_000]) {
        const m = { id: providerId(channel), from: senderId(channel), text: `Odd clock ${atMs}`, atMs };
        const before = Date.now();
        const res = await deliver(t, connection, m);
        expect(res.statusCode, `${atMs} → ${res.body}`).toBe(200);
        expect(await storedCount(m.id)).toBe(1);
        const stored = (await api('GET', `/channels/messages?channel=${channel}`))
          .json()
          .items.find((x: { providerMessageId: string }) => x.providerMessageId === m.id);
        expect(Date.parse(stored.at)).toBeGreaterThanOrEqual(before - 1000);
        expect(Date.parse(stored.at)).toBeLessThanOrEqual(Date.now() + 1000);
      }
    },
  );

  it('answers malformed payloads (signed) with 4xx, never 5xx, and stores nothing', async () => {
    const connection = connections.get(channel)!;
    const before = await totalMessages();
    const bodies = [
      '',
      '{',
      'null',
      '[]',
      '{"object":"page","entry":"nope"}',
      '{"update_id":"x"}',
      '{"event":"message","message_token":1}',
      `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      '{"update_id":1,"update_id":2}',
      'MessageSid=&From=',
      '\u0000\u0001\u0002',
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ changes: [{ field: 'messages', value: { messages: [{ id: 1 }] } }] }],
      }),
    ];
    for (const body of bodies) {
      const res = await postSigned(t, connection, body);
      expect(res.statusCode, `${JSON.stringify(body.slice(0, 40))} → ${res.body}`).toBeLessThan(500);
      if (res.statusCode >= 400) expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect(await totalMessages()).toBe(before);
  });
});

describe('replies and statuses', () => {
  it.each(CHANNELS)('%s: a reply goes out through the provider API and is stored as sent', async (channel) => {
    const connection = connections.get(channel)!;
    const from = senderId(channel);
    await deliver(t, connection, { id: providerId(channel), from, text: 'Can I book a visit?' });
    const conversation = await conversationWith(channel, from);
    const sent = await api('POST', `/channels/conversations/${conversation.id}/messages`, {
      text: 'Yes, Tuesday 10:00?',
    });
    expect(sent.statusCode, sent.body).toBe(201);
    expect(sent.json()).toMatchObject({ direction: 'out', status: 'sent', text: 'Yes, Tuesday 10:00?' });
    const emulator = {
      telegram: 'telegram',
      whatsapp: 'meta',
      messenger: 'meta',
      instagram: 'meta',
      viber: 'viber',
      sms: 'twilio',
    }[channel];
    const outbox = (
      await t.request({ method: 'GET', url: `/_emulators/${emulator}/sent?to=${encodeURIComponent(from)}` })
    ).json().items;
    expect(outbox[0]).toMatchObject({ to: from, text: 'Yes, Tuesday 10:00?', id: sent.json().providerMessageId });
  });

  it('a reply the provider rate-limits (429) is sent again and arrives once (a timeout is never resent: see upstream)', async () => {
    const tg = connections.get('telegram')!;
    const from = senderId('telegram');
    await deliver(t, tg, { id: providerId('telegram'), from, text: 'Are you open Saturday?' });
    const conversation = await conversationWith('telegram', from);
    const sentTo = async () =>
      (await (await fetch(`${t.baseUrl}/_emulators/telegram/sent?to=${from}`)).json()).items as unknown[];
    const fault = (payload: object) => t.request({ method: 'POST', url: '/_emulators/telegram/faults', payload });
    await fault({ operation: 'messages.send', status: 429 });
    const limited = await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Yes, 9 to 1' });
    expect(limited.json()).toMatchObject({ status: 'sent' });
    expect(await sentTo()).toHaveLength(1);
  });

  it("Telegram's 429 names its wait only in the body (parameters.retry_after): the send waits that long, and past the cap it is not resent", async () => {
    const tg = connections.get('telegram')!;
    const from = senderId('telegram');
    await deliver(t, tg, { id: providerId('telegram'), from, text: 'Can I come at 8?' });
    const conversation = await conversationWith('telegram', from);
    const sentTo = async () =>
      (await (await fetch(`${t.baseUrl}/_emulators/telegram/sent?to=${from}`)).json()).items as unknown[];
    const fault = (payload: object) => t.request({ method: 'POST', url: '/_emulators/telegram/faults', payload });
    const reply = (text: string) => api('POST', `/channels/conversations/${conversation.id}/messages`, { text });

    // The emulator answers as Telegram does: the wait in the body, no Retry-After header.
    await fault({ operation: 'messages.send', status: 429, body: { parameters: { retry_after: 2 } } });
    const raw = await fetch(`${t.baseUrl}/_emulators/telegram/bot${tg.credentials.botToken}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: from, text: 'x' }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get('retry-after')).toBeNull();
    expect(await raw.json()).toEqual({
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 2',
      parameters: { retry_after: 2 },
    });

    // Within the cap (3 s: someone waits at the reply box): sent again after the 2 s Telegram asked for, not
    // after the usual ~0.1 s backoff.
    await fault({ operation: 'messages.send', status: 429, body: { parameters: { retry_after: 2 } } });
    const started = Date.now();
    const waited = await reply('Yes, 8 is fine');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1950);
    expect(waited.json()).toMatchObject({ status: 'sent' });
    expect(await sentTo()).toHaveLength(1);

    // Past the cap (5 s, and 60 s): answered at once as refused, in Telegram's words, and never resent.
    for (const wait of [5, 60]) {
      await fault({ operation: 'messages.send', status: 429, body: { parameters: { retry_after: wait } } });
      const refusedAt = Date.now();
      const refused = await reply('See you at 8');
      expect(Date.now() - refusedAt).toBeLessThan(1500);
      expect(refused.json()).toMatchObject({ status: 'failed' });
      expect(refused.json().error).toContain(`Too Many Requests: retry after ${wait}`);
      expect(await sentTo()).toHaveLength(1);
    }
  }, 20_000);

  it('a provider refusal stores the reply as failed with its words; delivery and read reports move statuses forward', async () => {
    const wa = connections.get('whatsapp')!;
    const from = senderId('whatsapp');
    await deliver(t, wa, { id: providerId('whatsapp'), from, text: 'Hi' });
    const conversation = await conversationWith('whatsapp', from);
    await t.request({
      method: 'POST',
      url: '/_emulators/meta/faults',
      payload: { operation: 'messages.send', status: 400 },
    });
    const failed = await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Hello?' });
    expect(failed.statusCode).toBe(201);
    expect(failed.json()).toMatchObject({ status: 'failed' });
    expect(failed.json().error).toContain('131026');

    const ok = (
      await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Hello again' })
    ).json();
    // Each reply is a `message_send` audit row with contract §3's members (the conversation is the thread).
    const sends = (await api('GET', '/audit?kind=message_send')).json().items as Record<string, unknown>[];
    expect(sends.find((a) => a.messageId === ok.id)).toMatchObject({
      module: 'channels',
      threadId: conversation.id,
      conversationId: conversation.id,
      channel: 'whatsapp',
    });
    const report = async (status: string) => {
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: '1',
            changes: [
              {
                field: 'messages',
                value: { statuses: [{ id: ok.providerMessageId, status, timestamp: '1', recipient_id: from }] },
              },
            ],
          },
        ],
      });
      return postSigned(t, wa, body);
    };
    const statusOf = async () =>
      (await api('GET', `/channels/messages?conversationId=${conversation.id}`))
        .json()
        .items.find((m: { id: string }) => m.id === ok.id).status;
    expect((await report('read')).statusCode).toBe(200);
    expect(await statusOf()).toBe('read');
    await report('delivered');
    expect(await statusOf()).toBe('read');
    // A late `failed` does not undo `read`: the patient has it.
    await report('failed');
    expect(await statusOf()).toBe('read');
  });

  it('the inbox list says when the last message is a reply that failed, and stops once a reply goes out', async () => {
    const wa = connections.get('whatsapp')!;
    const from = senderId('whatsapp');
    await deliver(t, wa, { id: providerId('whatsapp'), from, text: 'Can I come at 4?' });
    expect((await conversationWith('whatsapp', from)).lastMessage).toMatchObject({
      text: 'Can I come at 4?',
      direction: 'in',
      status: 'received',
    });
    const conversation = await conversationWith('whatsapp', from);
    await t.request({
      method: 'POST',
      url: '/_emulators/meta/faults',
      payload: { operation: 'messages.send', status: 400 },
    });
    const failed = await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Yes, 4 works' });
    expect(failed.json().status).toBe('failed');
    expect((await conversationWith('whatsapp', from)).lastMessage).toMatchObject({
      text: 'Yes, 4 works',
      direction: 'out',
      status: 'failed',
    });
    // Retrying is sending the same text again: a new message; the failed one stays failed.
    const retried = await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Yes, 4 works' });
    expect(retried.json()).toMatchObject({ status: 'sent', text: 'Yes, 4 works' });
    expect(retried.json().id).not.toBe(failed.json().id);
    expect((await conversationWith('whatsapp', from)).lastMessage).toMatchObject({ direction: 'out', status: 'sent' });
    const thread = (await api('GET', `/channels/messages?conversationId=${conversation.id}`)).json().items;
    expect(thread.find((m: { id: string }) => m.id === failed.json().id).status).toBe('failed');
  });

  it("a refusal's words are kept cleaned and at most 500 characters; a reply whose send was cut off shows as failed", async () => {
    const wa = connections.get('whatsapp')!;
    const from = senderId('whatsapp');
    await deliver(t, wa, { id: providerId('whatsapp'), from, text: 'Hello' });
    const conversation = await conversationWith('whatsapp', from);
    await t.request({
      method: 'POST',
      url: '/_emulators/meta/faults',
      payload: {
        operation: 'messages.send',
        status: 400,
        body: { error: { message: `bell\u0007 ${'x'.repeat(20_000)}`, code: 100 } },
      },
    });
    const failed = (await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Hi?' })).json();
    expect(failed.status).toBe('failed');
    expect(failed.error.length).toBeLessThanOrEqual(500);
    expect(failed.error).not.toContain('\u0007');

    // A reply stored as `sending` whose process died mid-send: after the send window it reads as failed.
    await withTenant(t.app.atrium.db, { workspaceId: ws.id }, (tx) =>
      tx.execute(sql`INSERT INTO channel_messages (workspace_id, id, conversation_id, connection_id, channel,
                       direction, text, status, at)
                     VALUES (${ws.id}, 'chm_cutoff0000000001', ${conversation.id}, ${wa.id}, 'whatsapp', 'out',
                       'Cut off', 'sending', now() - interval '10 minutes')`),
    );
    const cut = (await api('GET', `/channels/messages?conversationId=${conversation.id}&limit=200`))
      .json()
      .items.find((m: { id: string }) => m.id === 'chm_cutoff0000000001');
    expect(cut).toMatchObject({ status: 'failed', error: expect.stringContaining('interrupted') });
  });

  it('Twilio reports delivery to the status callback, signed; the reply becomes delivered', async () => {
    const sms = connections.get('sms')!;
    const from = senderId('sms');
    await deliver(t, sms, { id: providerId('sms'), from, text: 'Running late' });
    const conversation = await conversationWith('sms', from);
    const sent = (
      await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'No problem' })
    ).json();
    await expect
      .poll(
        async () =>
          (await api('GET', `/channels/messages?conversationId=${conversation.id}`))
            .json()
            .items.find((m: { id: string }) => m.id === sent.id).status,
        { timeout: 5_000 },
      )
      .toBe('delivered');
  });

  it('a Twilio report that overtakes the answer to the send still marks the reply delivered', async () => {
    const sms = connections.get('sms')!;
    const from = senderId('sms');
    await deliver(t, sms, { id: providerId('sms'), from, text: 'Is parking free?' });
    const conversation = await conversationWith('sms', from);
    const fault = await t.request({
      method: 'POST',
      url: '/_emulators/twilio/faults',
      payload: { operation: 'messages.callback-first', delayMs: 0 },
    });
    expect(fault.statusCode).toBe(201);
    const sent = (
      await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Yes, it is' })
    ).json();
    // The report was handled before the send's answer came back; nothing later would change it.
    const stored = (await api('GET', `/channels/messages?conversationId=${conversation.id}`))
      .json()
      .items.find((m: { id: string }) => m.id === sent.id);
    expect(stored.status).toBe('delivered');
    expect(stored.providerMessageId).toMatch(/^SM[0-9a-f]{32}$/);
  });

  it('a disconnected channel refuses webhooks (401) and replies (409), and keeps its conversations', async () => {
    const extra = await connectChannel(t, ws.admin.token, 'viber', 'Second Viber');
    const from = senderId('viber');
    expect((await deliver(t, extra, { id: providerId('viber'), from, text: 'before' })).statusCode).toBe(200);
    expect((await api('DELETE', `/channels/${extra.id}`)).statusCode).toBe(204);
    expect((await deliver(t, extra, { id: providerId('viber'), from, text: 'after' })).statusCode).toBe(401);
    const conversation = await conversationWith('viber', from);
    expect(conversation).toBeTruthy();
    const refused = await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'x' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('channel_disconnected');
  });
});

describe('group commit', () => {
  it('a burst of webhooks is stored in shared transactions: every message once, each conversation counted right', async () => {
    const connection = await connectChannel(t, ws.admin.token, 'whatsapp', 'Burst WhatsApp');
    const senders = Array.from({ length: 5 }, () => senderId('whatsapp'));
    const burst = Array.from({ length: 40 }, (_, n) => ({
      id: providerId('whatsapp'),
      from: senders[n % 5],
      text: `burst ${n}`,
      name: `Sender ${n % 5}`,
    }));
    // Every fourth message also arrives twice at once (a provider's retry racing the original).
    const sends = [...burst, ...burst.filter((_, n) => n % 4 === 0)];
    const answers = await Promise.all(sends.map((m) => deliver(t, connection, m)));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(sends.length).fill(200));
    const storedByAnswer = answers.reduce((sum, r) => sum + r.json().stored, 0);
    expect(storedByAnswer).toBe(40);
    for (const m of burst) expect(await storedCount(m.id)).toBe(1);
    const conversations = (await api('GET', '/channels/conversations?channel=whatsapp&limit=100'))
      .json()
      .items.filter((c: { contact: { externalId: string } }) => senders.includes(c.contact.externalId));
    expect(conversations).toHaveLength(5);
    for (const c of conversations) expect(c.unreadCount).toBe(8);
    const [row] = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ batches: number }>(
        tx,
        sql`SELECT count(DISTINCT e.created_at)::int AS batches FROM domain_events e
        WHERE e.workspace_id = ${ws.id} AND e.type = 'channel.message.received'
          AND e.data->>'conversationId' IN (${sql.join(
            conversations.map((c: { id: string }) => sql`${c.id}`),
            sql`, `,
          )})`,
      ),
    );
    // On the server, concurrent webhooks share transactions. (PGlite runs a whole transaction
    // before the next request is read, so there each webhook is its own batch.)
    if (TEST_SERVER_URL) expect(row.batches).toBeLessThan(40);
    else expect(row.batches).toBeLessThanOrEqual(40);
  });

  it("keeps an attachment's address only when it is an http(s) link, so a script never becomes one", async () => {
    const connection = await connectChannel(t, ws.admin.token, 'messenger', 'Links Messenger');
    const [row] = await withSystem(t.app.atrium.db, (tx) =>
      tx.select().from(channelConnections).where(eq(channelConnections.id, connection.id)),
    );
    const dedup = `links-${connection.id}`;
    const stored = await withTenant(t.app.atrium.db, { workspaceId: ws.id }, (tx) =>
      storeInbound(tx, row, [
        {
          kind: 'message',
          dedupKey: dedup,
          providerMessageId: dedup,
          contact: { externalId: senderId('messenger'), name: 'Lin', phone: null },
          text: 'see these',
          attachments: [
            { type: 'image', url: 'https://cdn.example.test/x.jpg' },
            { type: 'file', url: 'javascript:alert(document.cookie)' },
            { type: 'file', url: 'data:text/html,<script>alert(1)</script>' },
            { type: 'file', url: '/relative/path' },
          ],
          at: new Date(),
        },
      ]),
    );
    expect(stored[0]).not.toBeNull();
    const items: { providerMessageId: string; attachments: { type: string; url?: string }[] }[] = (
      await api('GET', '/channels/messages?channel=messenger&limit=100')
    ).json().items;
    const message = items.find((m) => m.providerMessageId === dedup);
    expect(message?.attachments).toEqual([
      { type: 'image', url: 'https://cdn.example.test/x.jpg' },
      { type: 'file' },
      { type: 'file' },
      { type: 'file' },
    ]);
  });

  it('one batch of many messages: duplicates inside it stored once, names kept, preview the newest, unread per conversation', async () => {
    const connection = await connectChannel(t, ws.admin.token, 'viber', 'Batch Viber');
    const [row] = await withSystem(t.app.atrium.db, (tx) =>
      tx.select().from(channelConnections).where(eq(channelConnections.id, connection.id)),
    );
    const [a, b] = [senderId('viber'), senderId('viber')];
    const at = (n: number) => new Date(Date.UTC(2026, 10, 25, 9, 0, n));
    const message = (n: number, from: string, name: string | null, dedup = `m${n}-${from}`): InboundMessage => ({
      kind: 'message',
      dedupKey: dedup,
      providerMessageId: dedup,
      contact: { externalId: from, name, phone: null },
      text: `text ${n}\u0000`,
      attachments: [],
      at: at(n),
    });
    const batch = [
      message(1, a, 'Ada'),
      message(2, b, 'Bea'),
      message(3, a, null),
      message(1, a, 'Ada'), // the same message again inside the batch
      message(4, b, null),
      message(5, a, null),
    ];
    const stored = await withTenant(t.app.atrium.db, { workspaceId: ws.id }, (tx) => storeInbound(tx, row, batch));
    expect(stored.map((s) => s !== null)).toEqual([true, true, true, false, true, true]);
    const again = await withTenant(t.app.atrium.db, { workspaceId: ws.id }, (tx) =>
      storeInbound(tx, row, [message(5, a, null)]),
    );
    expect(again).toEqual([null]);
    const conversations = (await api('GET', '/channels/conversations?channel=viber&limit=100'))
      .json()
      .items.filter((c: { contact: { externalId: string } }) => [a, b].includes(c.contact.externalId));
    const byContact = Object.fromEntries(
      conversations.map((c: { contact: { externalId: string; name: string } }) => [c.contact.externalId, c]),
    );
    expect(byContact[a]).toMatchObject({ unreadCount: 3, lastMessage: { text: 'text 5' }, contact: { name: 'Ada' } });
    expect(byContact[b]).toMatchObject({ unreadCount: 2, lastMessage: { text: 'text 4' }, contact: { name: 'Bea' } });
  });

  it('the inbox stream hears of a stored message once its batch committed, and of nothing refused', async () => {
    const connection = connections.get('telegram')!;
    const stream = await openSse(t.baseUrl, '/api/v1/channels/events', ws.admin.token);
    try {
      expect(stream.status).toBe(200);
      const m = { id: providerId('telegram'), from: senderId('telegram'), text: 'Can I come at 3?' };
      expect((await deliver(t, connection, m, { tamper: true })).statusCode).toBe(401);
      expect((await deliver(t, connection, m)).statusCode).toBe(200);
      const conversation = await conversationWith('telegram', m.from);
      const events = await stream.waitFor((all) => all.some((e) => e.data.includes(conversation.id)));
      expect(events.filter((e) => e.data.includes(conversation.id))).toHaveLength(1);
    } finally {
      stream.close();
    }
  });

  it('a connection disconnected on another instance refuses at once, although this one has its credentials', async () => {
    const connection = await connectChannel(t, ws.admin.token, 'telegram', 'Second Telegram');
    const from = senderId('telegram');
    expect((await deliver(t, connection, { id: providerId('telegram'), from, text: 'before' })).statusCode).toBe(200);
    // What another instance's DELETE leaves: the row marked, this process's copy untouched.
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(sql`UPDATE channel_connections SET deleted_at = now() WHERE id = ${connection.id}`),
    );
    const late = { id: providerId('telegram'), from, text: 'after the disconnect' };
    expect((await deliver(t, connection, late)).statusCode).toBe(401);
    expect(await storedCount(late.id)).toBe(0);
  });
});

describe('Meta handshake', () => {
  it.each(['whatsapp', 'messenger', 'instagram'] as const)(
    '%s echoes hub.challenge only for the right verify token',
    async (channel) => {
      const c = connections.get(channel)!;
      const url = (token: string) =>
        `/api/v1/${channel}/webhook?connection=${c.id}&hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`;
      const ok = await t.request({ method: 'GET', url: url(c.credentials.verifyToken) });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['content-type']).toContain('text/plain');
      expect(ok.body).toBe('1158201444');
      expect((await t.request({ method: 'GET', url: url('wrong-token-here') })).statusCode).toBe(403);
    },
  );
});

describe('patients and the inbox', () => {
  it('linking a contact to a patient writes phi_access; the patient filter then finds the thread; mark read clears unread', async () => {
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Grace', familyName: 'Hopper' });
    const sms = connections.get('sms')!;
    const from = senderId('sms');
    await deliver(t, sms, { id: providerId('sms'), from, text: 'This is Grace' });
    const conversation = await conversationWith('sms', from);
    const unknown = await api('PUT', `/channels/contacts/${conversation.contact.id}/patient`, {
      patientId: 'pat_unknown',
    });
    expect(unknown.statusCode).toBe(422);
    const linked = await api('PUT', `/channels/contacts/${conversation.contact.id}/patient`, { patientId: patient.id });
    expect(linked.statusCode, linked.body).toBe(200);
    const audit = (await api('GET', `/audit?kind=phi_access&patientId=${patient.id}`)).json().items;
    expect(audit.some((a: { context?: string }) => a.context === 'channels.contact_linked')).toBe(true);
    const forPatient = (await api('GET', `/channels/conversations?patientId=${patient.id}`)).json().items;
    expect(forPatient.map((c: { id: string }) => c.id)).toEqual([conversation.id]);
    // Linked, the contact is named by the patient record, in the inbox as on the record.
    expect(forPatient[0].contact.patientName).toBe('Grace Hopper');
    expect((await conversationWith('sms', from)).contact).toMatchObject({
      patientId: patient.id,
      patientName: 'Grace Hopper',
    });
    expect((await api('POST', `/channels/conversations/${conversation.id}/read`)).statusCode).toBe(204);
    const after = (await api('GET', `/channels/conversations?patientId=${patient.id}`)).json().items[0];
    expect(after.unreadCount).toBe(0);

    // The navigation's badge reads counts only: no names, no words, no audit row.
    await deliver(t, sms, { id: providerId('sms'), from, text: 'Are you open today?' });
    const unread = (await api('GET', '/channels/unread')).json();
    expect(unread.items.find((u: { conversationId: string }) => u.conversationId === conversation.id)).toEqual({
      conversationId: conversation.id,
      channel: 'sms',
      unreadCount: 1,
      updatedAt: expect.any(String),
    });
    expect(unread.total).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(unread)).not.toMatch(/Grace|Hopper|open today/);
    // Seeing a linked patient's conversations or messages is a PHI read: one row per reader, patient
    // and place per hour, however often the inbox refreshes.
    await api('GET', '/channels/conversations');
    await api('GET', `/channels/messages?conversationId=${conversation.id}`);
    await api('GET', `/channels/messages?conversationId=${conversation.id}`);
    await api('GET', '/channels/messages?channel=sms');
    const reads = (await api('GET', `/audit?kind=phi_access&patientId=${patient.id}`)).json().items as {
      context?: string;
      actorUserId: string;
    }[];
    const count = (context: string) => reads.filter((a) => a.context === context).length;
    expect([count('channels.inbox'), count('channels.conversation')]).toEqual([1, 1]);
    expect(reads.every((a) => a.actorUserId === ws.admin.userId)).toBe(true);
  });
});

describe('paging and tiers', () => {
  it('pages conversations and messages whole when their times differ only in microseconds; a forged cursor is a 400', async () => {
    const other = await createWorkspace(t, { tier: 'standard' });
    const viber = await connectChannel(t, other.admin.token, 'viber');
    for (let i = 0; i < 3; i++)
      await deliver(t, viber, { id: providerId('viber'), from: senderId('viber'), text: `hello ${i}` });
    // Rows written in one transaction share `now()`; here three times inside one millisecond.
    await withSystem(t.app.atrium.db, async (tx) => {
      await tx.execute(sql`
        UPDATE channel_conversations c SET updated_at = '2026-11-26T10:00:00.123Z'::timestamptz + (n || ' microseconds')::interval
          FROM (SELECT id, row_number() OVER (ORDER BY id) * 100 AS n FROM channel_conversations
                 WHERE workspace_id = ${other.id}) x
         WHERE c.workspace_id = ${other.id} AND c.id = x.id`);
      await tx.execute(sql`
        UPDATE channel_messages m SET at = '2026-11-26T10:00:00.456Z'::timestamptz + (n || ' microseconds')::interval
          FROM (SELECT id, row_number() OVER (ORDER BY id) * 100 AS n FROM channel_messages
                 WHERE workspace_id = ${other.id}) x
         WHERE m.workspace_id = ${other.id} AND m.id = x.id`);
    });
    for (const list of ['conversations', 'messages']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await api(
          'GET',
          `/channels/${list}?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
          undefined,
          other.admin.token,
        );
        expect(page.statusCode, page.body).toBe(200);
        seen.push(...page.json().items.map((x: { id: string }) => x.id));
        cursor = page.json().nextCursor;
      } while (cursor && seen.length < 10);
      expect(new Set(seen).size, list).toBe(3);
    }
    for (const forged of [
      ['x', 'y'],
      ['2026-13-45T00:00:00.000000Z', 'y'],
      ['0000-01-01T00:00:00.000000Z', 'y'],
      { u: '2026-11-26T10:00:00Z', id: 'y' },
    ]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString('base64url');
      for (const list of ['conversations', 'messages']) {
        const res = await api('GET', `/channels/${list}?cursor=${cursor}`, undefined, other.admin.token);
        expect(res.statusCode, `${list} ${JSON.stringify(forged)}`).toBe(400);
        expect(res.json().code).toBe('validation_failed');
      }
    }
  });

  it('one conversation by id, as the list shows it, also one past the first page; 404 for one not here', async () => {
    const other = await createWorkspace(t, { tier: 'standard' });
    const sms = await connectChannel(t, other.admin.token, 'sms');
    const senders = [senderId('sms'), senderId('sms'), senderId('sms')];
    for (const from of senders) await deliver(t, sms, { id: providerId('sms'), from, text: `from ${from}` });
    const first = await api('GET', '/channels/conversations?limit=2', undefined, other.admin.token);
    expect(first.json().items).toHaveLength(2);
    const rest = await api(
      'GET',
      `/channels/conversations?limit=2&cursor=${first.json().nextCursor}`,
      undefined,
      other.admin.token,
    );
    const [oldest] = rest.json().items;
    expect(oldest.contact.externalId).toBe(senders[0]);
    const one = await api('GET', `/channels/conversations/${oldest.id}`, undefined, other.admin.token);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toEqual(oldest);
    expect(one.json().lastMessage).toMatchObject({ text: `from ${senders[0]}`, direction: 'in' });
    const missing = await api('GET', '/channels/conversations/chc_nothere', undefined, other.admin.token);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    // A linked patient's conversation opened by id is a PHI read, like the conversation's messages.
    const patient = await createPatient(t, other.admin.token, { givenName: 'Ada', familyName: 'Lovelace' });
    await api('PUT', `/channels/contacts/${oldest.contact.id}/patient`, { patientId: patient.id }, other.admin.token);
    expect(
      (await api('GET', `/channels/conversations/${oldest.id}`, undefined, other.admin.token)).json().contact,
    ).toMatchObject({ patientId: patient.id, patientName: 'Ada Lovelace' });
    const reads = (
      await api('GET', `/audit?kind=phi_access&patientId=${patient.id}`, undefined, other.admin.token)
    ).json().items as { context?: string }[];
    expect(reads.some((r) => r.context === 'channels.conversation')).toBe(true);
  });

  it('the unread total counts every unread conversation, not only the 200 listed', async () => {
    const busy = await createWorkspace(t, { tier: 'standard' });
    const connection = await connectChannel(t, busy.admin.token, 'viber');
    const [row] = await withSystem(t.app.atrium.db, (tx) =>
      tx.select().from(channelConnections).where(eq(channelConnections.id, connection.id)),
    );
    // 230 conversations with unread messages: the first 30 senders wrote three times, the others once.
    const senders = Array.from({ length: 230 }, () => senderId('viber'));
    const batch: InboundMessage[] = senders.flatMap((from, n) =>
      Array.from({ length: n < 30 ? 3 : 1 }, (_, k) => ({
        kind: 'message' as const,
        dedupKey: `unread-${from}-${k}`,
        providerMessageId: `unread-${from}-${k}`,
        contact: { externalId: from, name: null, phone: null },
        text: `hello ${k}`,
        attachments: [],
        at: new Date(Date.UTC(2026, 10, 25, 9, 0, 0, n * 3 + k)),
      })),
    );
    await withTenant(t.app.atrium.db, { workspaceId: busy.id }, (tx) => storeInbound(tx, row, batch));
    const unread = await api('GET', '/channels/unread', undefined, busy.admin.token);
    expect(unread.statusCode, unread.body).toBe(200);
    expect(unread.json().items).toHaveLength(200);
    expect(unread.json()).toMatchObject({ total: 30 * 3 + 200, conversations: 230 });
    // Fewer than the list holds: the same totals from the list itself.
    const [first] = unread.json().items;
    expect(
      (await api('POST', `/channels/conversations/${first.conversationId}/read`, undefined, busy.admin.token))
        .statusCode,
    ).toBe(204);
    const after = (await api('GET', '/channels/unread', undefined, busy.admin.token)).json();
    expect(after).toMatchObject({ total: 290 - first.unreadCount, conversations: 229 });
    const fewer = await createWorkspace(t, { tier: 'standard' });
    const sms = await connectChannel(t, fewer.admin.token, 'sms');
    await deliver(t, sms, { id: providerId('sms'), from: senderId('sms'), text: 'one' });
    expect((await api('GET', '/channels/unread', undefined, fewer.admin.token)).json()).toMatchObject({
      total: 1,
      conversations: 1,
      items: [{ unreadCount: 1 }],
    });
  });

  it('a workspace moved below Standard receives nothing: a verified webhook is 403 tier_required, and works again after', async () => {
    const { setTier } = await import('../../../test/helpers/factories.js');
    const other = await createWorkspace(t, { tier: 'standard' });
    const viber = await connectChannel(t, other.admin.token, 'viber');
    const m = () => ({ id: providerId('viber'), from: senderId('viber'), text: 'still there?' });
    expect((await deliver(t, viber, m())).statusCode).toBe(200);
    await setTier(t, other.id, 'free');
    const refused = m();
    const res = await deliver(t, viber, refused);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toMatchObject({ code: 'tier_required', requiredTier: 'standard' });
    expect(await storedCount(refused.id)).toBe(0);
    await setTier(t, other.id, 'standard');
    const back = m();
    expect((await deliver(t, viber, back)).statusCode).toBe(200);
    expect(await storedCount(back.id)).toBe(1);
  });

  it('a read watermark past any date marks what was sent so far; one before 2000 or unholdable changes nothing', async () => {
    const messenger = connections.get('messenger')!;
    const from = senderId('messenger');
    await deliver(t, messenger, { id: providerId('messenger'), from, text: 'Hi there' });
    const conversation = await conversationWith('messenger', from);
    const sent = (await api('POST', `/channels/conversations/${conversation.id}/messages`, { text: 'Hello!' })).json();
    expect(sent.status).toBe('sent');
    const read = (watermark: number) => {
      const body = JSON.stringify({
        object: 'page',
        entry: [
          {
            id: messenger.credentials.pageId,
            time: Date.now(),
            messaging: [
              {
                sender: { id: from },
                recipient: { id: messenger.credentials.pageId },
                timestamp: Date.now(),
                read: { watermark },
              },
            ],
          },
        ],
      });
      return postSigned(t, messenger, body);
    };
    const statusOf = async () =>
      (await api('GET', `/channels/messages?conversationId=${conversation.id}`))
        .json()
        .items.find((x: { id: string }) => x.id === sent.id).status;
    for (const watermark of [-8.6e15, 1e11]) {
      const res = await read(watermark);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().statuses).toBe(0);
    }
    expect(await statusOf()).toBe('sent');
    const res = await read(8.64e15);
    expect(res.statusCode, res.body).toBe(200);
    expect(await statusOf()).toBe('read');
  });
});

describe('one Meta app, several numbers and pages', () => {
  it("files each number's messages under that number's connection; a number not connected here is not stored", async () => {
    const { credentialsFor, inboundPayload } = await import('../../../test/helpers/channels.js');
    const other = await createWorkspace(t, { tier: 'standard' });
    const shared = credentialsFor('whatsapp');
    const connect = async (phoneNumberId: string, name: string) => {
      const res = await api(
        'POST',
        '/channels',
        { channel: 'whatsapp', name, credentials: { ...shared, phoneNumberId } },
        other.admin.token,
      );
      expect(res.statusCode, res.body).toBe(201);
      return { ...res.json(), credentials: { ...shared, phoneNumberId } } as Connected;
    };
    const front = await connect('111111111111', 'Front desk number');
    const billing = await connect('222222222222', 'Billing number');
    // The notification Meta sends for a message to that number (its metadata names the number).
    const notify = (phoneNumberId: string, id: string, text: string) =>
      inboundPayload('whatsapp', { id, from: '15557654321', text, name: 'Pat' }, { ...shared, phoneNumberId }).body;
    // Meta posts every number's events to the one callback URL (here: the front desk's).
    const forBilling = providerId('whatsapp');
    const res = await postSigned(t, front, notify('222222222222', forBilling, 'About my bill'));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().stored).toBe(1);
    const stranger = providerId('whatsapp');
    const unknown = await postSigned(t, front, notify('999999999999', stranger, 'Wrong number'));
    expect(unknown.statusCode, unknown.body).toBe(200);
    expect(unknown.json().stored).toBe(0);
    expect(await storedCount(stranger)).toBe(0);
    const messages = (await api('GET', '/channels/messages?channel=whatsapp', undefined, other.admin.token)).json()
      .items as { providerMessageId: string; conversationId: string }[];
    const conversations = (
      await api('GET', '/channels/conversations?channel=whatsapp', undefined, other.admin.token)
    ).json().items as { id: string; connectionId: string }[];
    const stored = messages.find((m) => m.providerMessageId === forBilling);
    expect(conversations.find((c) => c.id === stored?.conversationId)?.connectionId).toBe(billing.id);
  });

  it("an Instagram notification names the Instagram account, not the Page id it was connected with: it is this connection's", async () => {
    const instagram = connections.get('instagram')!;
    const { inboundPayload } = await import('../../../test/helpers/channels.js');
    const id = providerId('instagram');
    const body = inboundPayload(
      'instagram',
      { id, from: '7654321098765', text: 'Hello from Instagram' },
      {
        ...instagram.credentials,
        pageId: '17841400000000001',
      },
    ).body;
    const res = await postSigned(t, instagram, body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().stored).toBe(1);
    expect(await storedCount(id)).toBe(1);
  });

  it.each(['messenger'] as const)(
    "files each %s page's messages under that page's connection; a page not connected here is not stored",
    async (channel) => {
      const { credentialsFor, inboundPayload } = await import('../../../test/helpers/channels.js');
      const other = await createWorkspace(t, { tier: 'standard' });
      const shared = credentialsFor(channel);
      const connect = async (pageId: string, name: string) => {
        const res = await api(
          'POST',
          '/channels',
          { channel, name, credentials: { ...shared, pageId } },
          other.admin.token,
        );
        expect(res.statusCode, res.body).toBe(201);
        return { ...res.json(), credentials: { ...shared, pageId } } as Connected;
      };
      const clinic = await connect('333333333333', 'Clinic page');
      const pharmacy = await connect('444444444444', 'Pharmacy page');
      const notify = (pageId: string, id: string, text: string) =>
        inboundPayload(channel, { id, from: '7654321098765', text }, { ...shared, pageId }).body;
      // Meta posts every page's events to the one callback URL (here: the clinic page's).
      const forPharmacy = providerId(channel);
      const res = await postSigned(t, clinic, notify('444444444444', forPharmacy, 'Is my refill ready?'));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().stored).toBe(1);
      const stranger = providerId(channel);
      const unknown = await postSigned(t, clinic, notify('999999999999', stranger, 'Wrong page'));
      expect(unknown.statusCode, unknown.body).toBe(200);
      expect(unknown.json().stored).toBe(0);
      expect(await storedCount(stranger)).toBe(0);
      const messages = (await api('GET', `/channels/messages?channel=${channel}`, undefined, other.admin.token)).json()
        .items as { providerMessageId: string; conversationId: string }[];
      const conversations = (
        await api('GET', `/channels/conversations?channel=${channel}`, undefined, other.admin.token)
      ).json().items as { id: string; connectionId: string }[];
      const stored = messages.find((m) => m.providerMessageId === forPharmacy);
      expect(conversations.find((c) => c.id === stored?.conversationId)?.connectionId).toBe(pharmacy.id);
    },
  );
});
