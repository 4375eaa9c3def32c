// The video provider behind telehealth rooms (architecture convention 4): one interface, the
// emulator's HTTP API as its implementation by default, reached through platform/upstream.
import { z } from 'zod';
import { AppError } from '../../platform/errors.js';
import type { AppDeps } from '../../platform/types.js';
import { createUpstream, UpstreamError } from '../../platform/upstream/index.js';

export interface VideoProvider {
  createRoom(name: string, requestId?: string): Promise<{ providerRoomId: string; joinUrl: string }>;
  endRoom(providerRoomId: string): Promise<void>;
}

const room = z.object({ id: z.string().min(1), url: z.string().url() });

/** The video emulator (`/_emulators/video`); undefined when emulators are off and no provider is configured. */
export function resolveVideo(deps: AppDeps): VideoProvider | undefined {
  if (!deps.config.emulators) return undefined;
  const upstream = createUpstream({
    name: 'video',
    timeoutMs: 10_000,
    retries: 0,
    breaker: { consecutiveFailures: 5, failureRatio: 1 },
    headers: { authorization: 'Bearer atrium-local', accept: 'application/json' },
  });
  const base = () => `${deps.selfUrl()}/_emulators/video`;
  const fail = (what: string, err: unknown) =>
    new AppError('upstream_failed', 502, `The video provider could not ${what}`, {
      reason: err instanceof UpstreamError ? err.kind : String(err),
    });
  return {
    async createRoom(name, requestId) {
      try {
        const res = await upstream.request({
          method: 'POST',
          url: `${base()}/rooms`,
          json: { name },
          requestId,
          throwOnHttpError: true,
        });
        const made = room.parse(res.json());
        return { providerRoomId: made.id, joinUrl: made.url };
      } catch (err) {
        throw fail('create a room', err);
      }
    },
    async endRoom(providerRoomId) {
      try {
        await upstream.request({
          method: 'POST',
          url: `${base()}/rooms/${encodeURIComponent(providerRoomId)}/end`,
          throwOnHttpError: true,
        });
      } catch (err) {
        throw fail('end the room', err);
      }
    },
  };
}
