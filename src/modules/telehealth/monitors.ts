// Health probes of video visits (contract §9): the relay answers a real STUN binding request
// (RFC 5389) at ATRIUM_TURN_URL (default: the video emulator's responder), and rooms get made: every
// run creates and ends one room at the provider.
import { performance } from 'node:perf_hooks';
import { and, eq, inArray } from 'drizzle-orm';
import { localStunUrl } from '../../emulators/video/routes.js';
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

/**
 * Rooms the probe made but could not end (the provider refused the end, or it answered after the run's
 * timeout): ended at the next run, so a probe never leaves a room open at the provider. In process memory:
 * a restart forgets them (the emulator keeps its last 5,000 rooms; a real provider closes idle rooms).
 */
const unended = new Set<string>();
const PROBE_ROOM = 'atrium-health-probe';
/**
 * While the provider refuses ends, each run would add a room and end all of them: a run makes at most this many
 * end calls (the oldest first), and at most UNENDED_KEPT rooms are remembered (the oldest is let go; an idle room
 * closes at the provider by itself), so a struggling provider gets a few calls a run, not one per run since.
 */
const ENDS_PER_RUN = 2;
const UNENDED_KEPT = 20;

async function endRoom(base: string, id: string): Promise<number> {
  const res = await probeFetch('video', `${base}/rooms/${encodeURIComponent(id)}/end`, {
    method: 'POST',
    headers: { authorization: 'Bearer atrium-local' },
  }).catch(() => ({ ok: false, status: 0 }));
  // 404: the provider has no such room any more; nothing left open.
  if (res.ok || res.status === 404) unended.delete(id);
  else {
    unended.add(id);
    for (const oldest of unended) {
      if (unended.size <= UNENDED_KEPT) break;
      unended.delete(oldest);
    }
  }
  return res.status;
}

const rooms: DependencyProbe = {
  id: 'video:room-creation',
  feature: 'telehealth',
  slo: 'the provider creates a room within 2 s (and ends it)',
  impact: 'Video rooms for visits are not being prepared; join links may be missing.',
  affects,
  timeoutMs: 8_000,
  // Every run, scheduled or nightly, asks the provider for a room and ends it (contract §9: a small real
  // request, so an outage and a recovery both show at the next run). The share of rooms made over the last
  // 24 h lagged by hours both ways and read the whole rooms table every minute.
  async measure(deps) {
    if (!deps.config.emulators) {
      return {
        status: 'warn',
        observedValue: 'disabled',
        observedUnit: 'n/a',
        output: 'No video provider is configured',
      };
    }
    const base = `${deps.selfUrl()}/_emulators/video`;
    for (const id of [...unended].slice(0, ENDS_PER_RUN)) await endRoom(base, id);
    const started = performance.now();
    // Not cut short by the run's timeout: a room the provider makes after it is still ended (below).
    const made = await probeFetch('video', `${base}/rooms`, {
      method: 'POST',
      headers: { authorization: 'Bearer atrium-local', 'content-type': 'application/json' },
      body: JSON.stringify({ name: PROBE_ROOM }),
    });
    const tookMs = Math.round(performance.now() - started);
    const room = (await made.json().catch(() => undefined)) as { id?: string } | undefined;
    if (!made.ok || !room?.id) {
      return {
        status: 'fail',
        observedValue: made.status,
        observedUnit: 'http status',
        output: 'The provider did not create a room',
      };
    }
    const ended = await endRoom(base, room.id);
    if (unended.has(room.id)) {
      return {
        status: 'warn',
        observedValue: tookMs,
        observedUnit: 'ms',
        output: `created room ${room.id} but could not end it (${ended || 'no answer'}); the next run ends it`,
      };
    }
    return {
      status: tookMs <= 2_000 ? 'pass' : 'warn',
      observedValue: tookMs,
      observedUnit: 'ms',
      output: 'created and ended a room',
    };
  },
};

export const telehealthMonitors: DependencyProbe[] = [relay, rooms];

/** The rooms the probe still has to end (tests). */
export const probeRoomsUnended = (): ReadonlySet<string> => unended;
