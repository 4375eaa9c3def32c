// Video emulator: rooms created, read and ended over HTTP, with a join page per room, bearer API
// key, fault injection (`rooms.create`, `rooms.end`, `stun.binding`). Rooms are kept in the database
// (emulator_state). It also runs a STUN responder (RFC 5389 Binding over UDP on 127.0.0.1, an
// ephemeral port) standing in for the TURN relay: `GET /_emulators/video/stun` names its URL, which
// is the default of ATRIUM_TURN_URL for the relay probe.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { startStunResponder } from '../../platform/net/stun.js';
import type { AppDeps } from '../../platform/types.js';
import { readDoc, updateDoc } from '../calendar/store.js';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';

interface Room {
  id: string;
  name: string;
  status: 'open' | 'ended';
  created_at: string;
  ended_at: string | null;
}
interface VideoDoc {
  rooms: Room[];
}

const KEY = 'rooms';

const stunUrls = new WeakMap<AppDeps, string>();

/** The `stun:` URL of this app's emulated relay, once the video emulator is listening. */
export function localStunUrl(deps: AppDeps): string | undefined {
  return stunUrls.get(deps);
}
const initial = (): VideoDoc => ({ rooms: [] });

export async function videoEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  const db = () => fastify.atrium.db;
  // A `stun.binding` fault with a status answers that many Binding requests with a Binding error
  // response of that code (a relay refusing); one with only a delay drops them unanswered (a relay
  // that cannot be reached).
  const stun = await startStunResponder({
    fault: () => {
      const f = faults.take('stun.binding');
      if (!f) return undefined;
      return f.status !== undefined ? f.status : 'drop';
    },
  });
  stunUrls.set(fastify.atrium, stun.url);
  fastify.addHook('onClose', async () => {
    stunUrls.delete(fastify.atrium);
    await stun.close();
  });
  fastify.get('/stun', { schema: { hide: true } }, async () => ({ url: stun.url }));
  const origin = (request: FastifyRequest) => `${request.protocol}://${request.headers.host}`;
  const present = (request: FastifyRequest, room: Room) => ({
    ...room,
    url: `${origin(request)}/_emulators/video/r/${room.id}`,
  });
  const authed = (request: FastifyRequest, reply: FastifyReply) => {
    if (/^Bearer \S+/.test(request.headers.authorization ?? '')) return true;
    reply.status(401).send({ error: 'unauthorized', message: 'Send an API key as a bearer token' });
    return false;
  };
  const fault = async (operation: string, reply: FastifyReply) => {
    const f = await applyFault(faults, operation);
    if (!f) return false;
    reply.status(f.status!).send(f.body ?? { error: 'injected', message: `Injected ${f.status}` });
    return true;
  };

  fastify.post('/rooms', { schema: { hide: true } }, async (request, reply) => {
    if (!authed(request, reply) || (await fault('rooms.create', reply))) return reply;
    const name = String((request.body as { name?: unknown } | undefined)?.name ?? '').slice(0, 200);
    const room = await updateDoc(db(), 'video', KEY, initial, (doc: VideoDoc) => {
      const made: Room = {
        id: randomBytes(8).toString('hex'),
        name,
        status: 'open',
        created_at: new Date().toISOString(),
        ended_at: null,
      };
      doc.rooms = [...doc.rooms.slice(-4999), made];
      return made;
    });
    return reply.status(201).send(present(request, room));
  });

  fastify.get('/rooms/:id', { schema: { hide: true } }, async (request, reply) => {
    if (!authed(request, reply)) return reply;
    const room = (await readDoc<VideoDoc>(db(), 'video', KEY))?.rooms.find(
      (r) => r.id === (request.params as { id: string }).id,
    );
    if (!room) return reply.status(404).send({ error: 'not_found', message: 'No such room' });
    return reply.send(present(request, room));
  });

  fastify.post('/rooms/:id/end', { schema: { hide: true } }, async (request, reply) => {
    if (!authed(request, reply) || (await fault('rooms.end', reply))) return reply;
    const id = (request.params as { id: string }).id;
    const room = await updateDoc(db(), 'video', KEY, initial, (doc: VideoDoc) => {
      const r = doc.rooms.find((x) => x.id === id);
      if (r && r.status === 'open') Object.assign(r, { status: 'ended', ended_at: new Date().toISOString() });
      return r;
    });
    if (!room) return reply.status(404).send({ error: 'not_found', message: 'No such room' });
    return reply.send(present(request, room));
  });

  fastify.get('/r/:id', { schema: { hide: true } }, async (request, reply) =>
    reply
      .type('text/html')
      .send(
        `<!doctype html><title>Video visit (emulated)</title><h1>Video room ${String((request.params as { id: string }).id).replace(/[^0-9a-f]/g, '')}</h1><p>The local video emulator's stand-in for a telehealth call.</p>`,
      ),
  );
}
