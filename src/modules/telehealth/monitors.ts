// Health probes of video visits (contract §9): the relay answers a real STUN binding request
// (RFC 5389) at ATRIUM_TURN_URL (default: the video emulator's responder), and rooms get made: the
// share of rooms asked for in the last 24 h that the provider created; the nightly run also
// creates and ends one room at the provider.
import { performance } from 'node:perf_hooks';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { localStunUrl } from '../../emulators/video/routes.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import type { DependencyProbe } from '../../platform/module.js';
import { stunBinding } from '../../platform/net/stun.js';
import { oauthConnections } from '../../platform/oauth/index.js';
import { probeFetch } from '../../platform/upstream/index.js';
import { telehealthRooms } from './tables.js';

/**
 * Where video visits matter (banners and inbox notices, contract §9: only the features that affect
 * that user): a workspace that has had a video room, or has a calendar connection to book one on (a
 * visit with video is an event on a connected Google or Microsoft calendar).
 */
const affects: DependencyProbe['affects'] = async (tx, workspaceId) => {
  const rooms = await tx
    .select({ id: telehealthRooms.id })
    .from(telehealthRooms)
    .where(eq(telehealthRooms.workspaceId, workspaceId))
    .limit(1);
  if (rooms.length > 0) return true;
  const calendars = await tx
    .select({ id: oauthConnections.id })
    .from(oauthConnections)
    .where(
      and(eq(oauthConnections.workspaceId, workspaceId), inArray(oauthConnections.provider, ['google', 'microsoft'])),
    )
    .limit(1);
  return calendars.length > 0;
};

const relay: DependencyProbe = {
  id: 'video:relay-reachability',
  feature: 'telehealth',
  slo: 'the relay answers a STUN binding within 500 ms',
  impact: 'Video visits may fail to connect right now.',
  affects,
  timeoutMs: 4_000,
  async measure(deps, { signal }) {
    const url = deps.config.turnUrl ?? localStunUrl(deps);
    if (!url) {
      return {
        status: 'warn',
        observedValue: 'disabled',
        observedUnit: 'n/a',
        output: 'No ATRIUM_TURN_URL and no local responder',
      };
    }
    // Three transmissions (0, 250 and 750 ms): a relay silent for 1.5 s is failing its 500 ms objective
    // whatever it answers later, and the probe run need not wait longer to say so.
    const answer = await stunBinding(url, { timeoutMs: 1_500, signal });
    return {
      status: answer.rttMs <= 500 ? 'pass' : 'warn',
      observedValue: answer.rttMs,
      observedUnit: 'ms',
      output: `${url} mapped us to ${answer.address}:${answer.port}`,
    };
  },
};

const rooms: DependencyProbe = {
  id: 'video:room-creation',
  feature: 'telehealth',
  slo: '≥ 95 % of rooms asked for in 24 h were created',
  impact: 'Video rooms for visits are not being prepared; join links may be missing.',
  affects,
  timeoutMs: 8_000,
  async measure(deps, { signal, deep }) {
    if (deep && deps.config.emulators) {
      const base = `${deps.selfUrl()}/_emulators/video`;
      const started = performance.now();
      const made = await probeFetch('video', `${base}/rooms`, {
        method: 'POST',
        signal,
        headers: { authorization: 'Bearer atrium-local', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'atrium-health-probe' }),
      });
      const room = (await made.json().catch(() => undefined)) as { id?: string } | undefined;
      if (!made.ok || !room?.id) {
        return {
          status: 'fail',
          observedValue: made.status,
          observedUnit: 'http status',
          output: 'The provider did not create a room',
        };
      }
      await probeFetch('video', `${base}/rooms/${room.id}/end`, {
        method: 'POST',
        signal,
        headers: { authorization: 'Bearer atrium-local' },
      });
      return {
        status: 'pass',
        observedValue: Math.round(performance.now() - started),
        observedUnit: 'ms',
        output: 'created and ended a room',
      };
    }
    const [row] = await withSystem(deps.db, (tx) =>
      queryRows<{ asked: number; made: number }>(
        tx,
        sql`SELECT count(*)::int AS asked, count(*) FILTER (WHERE provider_room_id IS NOT NULL)::int AS made
              FROM telehealth_rooms
             WHERE created_at > now() - interval '24 hours' AND created_at < now() - interval '2 minutes'`,
      ),
    );
    if (row.asked === 0)
      return { status: 'pass', observedValue: 100, observedUnit: '%', output: 'No rooms asked for in 24 h' };
    const rate = Math.round((row.made / row.asked) * 1000) / 10;
    return {
      status: rate >= 95 ? 'pass' : rate >= 80 ? 'warn' : 'fail',
      observedValue: rate,
      observedUnit: '%',
      output: `${row.made} of ${row.asked} rooms created`,
    };
  },
};

export const telehealthMonitors: DependencyProbe[] = [relay, rooms];
