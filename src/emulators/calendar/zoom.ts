// Zoom REST API v2 (meetings) + server-to-server OAuth (account_credentials), emulated, with
// Zoom's error bodies ({code, message}), faults and expire-tokens. Meetings persist per account.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';
import { registerExpireTokens } from './oauth.js';
import { OAUTH_KEY, type OAuthDoc, oauthInitial, readDoc, updateDoc } from './store.js';
import { issueTokens, verify } from './tokens.js';

const NAME = 'zoom';

interface Meeting {
  id: number;
  uuid: string;
  topic: string;
  start_time: string;
  duration: number;
  timezone: string;
  agenda: string;
  password: string;
  created_at: string;
}
interface ZoomDoc {
  nextId: number;
  meetings: Meeting[];
}

const zoomError = (reply: FastifyReply, status: number, code: number, message: string) => {
  if (status === 429) reply.header('retry-after', '1');
  return reply.status(status).send({ code, message });
};
const DEFAULTS: Record<number, [number, string]> = {
  400: [300, 'Invalid request.'],
  401: [124, 'Invalid access token.'],
  404: [3001, 'Meeting does not exist.'],
  429: [429, 'You have reached the maximum per-second rate limit for this API. Try again later.'],
};

export async function zoomEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  registerExpireTokens(fastify, NAME);
  const db = () => fastify.atrium.db;
  const initial = (): ZoomDoc => ({ nextId: 81_000_000_000, meetings: [] });
  const origin = (request: FastifyRequest) => `${request.protocol}://${request.headers.host}`;

  const fault = async (operation: string, reply: FastifyReply) => {
    const f = await applyFault(faults, operation);
    if (!f) return false;
    const [code, message] = DEFAULTS[f.status!] ?? [f.status!, 'Internal error.'];
    if (f.body !== undefined) reply.status(f.status!).send(f.body);
    else zoomError(reply, f.status!, code, message);
    return true;
  };

  fastify.post('/oauth/token', { schema: { hide: true } }, async (request, reply) => {
    if (await fault('token', reply)) return reply;
    const q = request.query as Record<string, string | undefined>;
    const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? '');
    const [id, secret] = basic ? Buffer.from(basic[1], 'base64').toString('utf8').split(':') : [];
    if (!id || !secret)
      return reply.status(401).send({ reason: 'Invalid client_id or client_secret', error: 'invalid_client' });
    if (q.grant_type !== 'account_credentials' || !q.account_id) {
      return reply.status(400).send({ reason: 'Unsupported grant type', error: 'unsupported_grant_type' });
    }
    const state = (await readDoc<OAuthDoc>(db(), NAME, OAUTH_KEY)) ?? oauthInitial();
    const tokens = issueTokens(NAME, q.account_id, state.generation, false);
    return reply.send({
      access_token: tokens.access_token,
      token_type: 'bearer',
      expires_in: tokens.expires_in,
      scope: 'meeting:write:admin meeting:read:admin',
      api_url: origin(request),
    });
  });

  const authed = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const access = token ? verify(NAME, token, 'a') : undefined;
    const state = (await readDoc<OAuthDoc>(db(), NAME, OAUTH_KEY)) ?? oauthInitial();
    if (!access || access.g !== state.generation) {
      zoomError(reply, 401, 124, 'Invalid access token.');
      return undefined;
    }
    return access.e;
  };

  const present = (request: FastifyRequest, account: string, m: Meeting) => ({
    ...m,
    host_id: Buffer.from(account).toString('hex').slice(0, 22),
    host_email: `${account}@zoom.example`,
    type: 2,
    status: 'waiting',
    join_url: `${origin(request)}/_emulators/zoom/j/${m.id}?pwd=${m.password}`,
    start_url: `${origin(request)}/_emulators/zoom/s/${m.id}?zak=emulated`,
  });

  fastify.get('/j/:id', { schema: { hide: true } }, async (request, reply) =>
    reply
      .type('text/html')
      .send(
        `<!doctype html><title>Zoom (emulated)</title><h1>Zoom meeting ${String((request.params as { id: string }).id).replace(/\D/g, '')}</h1>`,
      ),
  );

  fastify.post('/v2/users/me/meetings', { schema: { hide: true } }, async (request, reply) => {
    const account = await authed(request, reply);
    if (!account || (await fault('meetings.create', reply))) return reply;
    const b = (request.body ?? {}) as Record<string, unknown>;
    if (typeof b.topic !== 'string' && b.topic !== undefined)
      return zoomError(reply, 400, 300, 'Invalid field: topic.');
    const start = typeof b.start_time === 'string' ? Date.parse(b.start_time) : Date.now();
    if (!Number.isFinite(start)) return zoomError(reply, 400, 300, 'Invalid field: start_time.');
    const meeting = await updateDoc(db(), NAME, account, initial, (doc: ZoomDoc) => {
      const m: Meeting = {
        id: doc.nextId++,
        uuid: randomBytes(16).toString('base64'),
        topic: String(b.topic ?? 'Zoom meeting').slice(0, 200),
        start_time: new Date(start).toISOString().replace('.000Z', 'Z'),
        duration: Math.max(1, Math.min(Number(b.duration ?? 60) || 60, 24 * 60)),
        timezone: typeof b.timezone === 'string' ? b.timezone : 'UTC',
        agenda: typeof b.agenda === 'string' ? b.agenda.slice(0, 2000) : '',
        password: randomBytes(6).toString('base64url'),
        created_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      };
      doc.meetings.push(m);
      return m;
    });
    return reply.status(201).send(present(request, account, meeting));
  });

  const meetingOf = (doc: ZoomDoc | undefined, id: string) => doc?.meetings.find((m) => String(m.id) === id);

  fastify.get('/v2/meetings/:id', { schema: { hide: true } }, async (request, reply) => {
    const account = await authed(request, reply);
    if (!account) return reply;
    const id = (request.params as { id: string }).id;
    const m = meetingOf(await readDoc<ZoomDoc>(db(), NAME, account), id);
    if (!m) return zoomError(reply, 404, 3001, `Meeting does not exist: ${id}.`);
    return reply.send(present(request, account, m));
  });

  fastify.patch('/v2/meetings/:id', { schema: { hide: true } }, async (request, reply) => {
    const account = await authed(request, reply);
    if (!account || (await fault('meetings.update', reply))) return reply;
    const id = (request.params as { id: string }).id;
    const b = (request.body ?? {}) as Record<string, unknown>;
    const found = await updateDoc(db(), NAME, account, initial, (doc: ZoomDoc) => {
      const m = meetingOf(doc, id);
      if (!m) return false;
      if (typeof b.topic === 'string') m.topic = b.topic.slice(0, 200);
      if (typeof b.start_time === 'string' && Number.isFinite(Date.parse(b.start_time)))
        m.start_time = new Date(b.start_time).toISOString().replace(/\.\d{3}Z$/, 'Z');
      if (typeof b.duration === 'number') m.duration = Math.max(1, Math.min(b.duration, 24 * 60));
      return true;
    });
    if (!found) return zoomError(reply, 404, 3001, `Meeting does not exist: ${id}.`);
    return reply.status(204).send();
  });

  fastify.delete('/v2/meetings/:id', { schema: { hide: true } }, async (request, reply) => {
    const account = await authed(request, reply);
    if (!account || (await fault('meetings.delete', reply))) return reply;
    const id = (request.params as { id: string }).id;
    const found = await updateDoc(db(), NAME, account, initial, (doc: ZoomDoc) => {
      const before = doc.meetings.length;
      doc.meetings = doc.meetings.filter((m) => String(m.id) !== id);
      return doc.meetings.length < before;
    });
    if (!found) return zoomError(reply, 404, 3001, `Meeting does not exist: ${id}.`);
    return reply.status(204).send();
  });
}
