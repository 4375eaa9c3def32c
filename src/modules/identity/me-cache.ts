// GET /me runs on every page load. Its answer (the user and their workspaces) changes only with the
// events that already invalidate cached credentials (tier, name, membership, revocation: NOTIFY on every
// instance), so it is kept beside them: a hit costs no database round trip.
import type { PrincipalCache } from '../../platform/auth/principal-cache.js';

export interface MeMembership {
  userId: string;
  email: string;
  userName: string;
  id: string;
  name: string;
  tier: 'free' | 'standard' | 'advanced' | 'enterprise';
  organizationId: string | null;
  timeZone: string | null;
  role: 'admin' | 'member';
}

const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

export class MeCache {
  private readonly entries = new Map<string, { rows: MeMembership[]; at: number }>();
  /** Bumped by every invalidation: a lookup that raced one is not cached. */
  private generation = 0;

  constructor(principals: PrincipalCache) {
    principals.onInvalidate(() => {
      this.generation++;
      this.entries.clear();
    });
  }

  get(userId: string, now = Date.now()): MeMembership[] | undefined {
    const entry = this.entries.get(userId);
    if (!entry) return undefined;
    if (now - entry.at > TTL_MS) {
      this.entries.delete(userId);
      return undefined;
    }
    return entry.rows;
  }

  /** Reads through the cache; `load` runs on a miss and its answer is kept unless an invalidation raced it. */
  async read(userId: string, load: () => Promise<MeMembership[]>): Promise<MeMembership[]> {
    const hit = this.get(userId);
    if (hit) return hit;
    const before = this.generation;
    const rows = await load();
    if (this.generation === before && rows.length > 0) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(userId, { rows, at: Date.now() });
    }
    return rows;
  }
}

const caches = new WeakMap<PrincipalCache, MeCache>();

/** One per app instance (tests build several apps in one process). */
export function meCacheFor(principals: PrincipalCache): MeCache {
  let cache = caches.get(principals);
  if (!cache) {
    cache = new MeCache(principals);
    caches.set(principals, cache);
  }
  return cache;
}
