import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import type { Principal } from './principals.js';

export const AUTH_CHANNEL = 'atrium_auth';
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  principal: Principal;
  via: 'token' | 'session';
  expiresAt: number;
}

/**
 * Resolved credentials, per instance, so a request does not pay a database round trip to
 * authenticate. Anything that revokes or changes a credential invalidates it here at once and on
 * every other instance through NOTIFY (`invalidateCredential`), so revocation stays effective.
 */
export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(key: string) => void>();
  private invalidations = 0;

  /**
   * Take before reading a credential from the database and pass to `set`: a lookup that raced an
   * invalidation (its row read before the change committed, the NOTIFY arriving before it
   * finished) is then not cached, so no instance keeps a stale tier, role or revoked credential.
   */
  get generation(): number {
    return this.invalidations;
  }

  get(hash: string): Entry | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry;
  }

  set(hash: string, principal: Principal, via: Entry['via'], notAfter?: Date, generation?: number): void {
    if (generation !== undefined && generation !== this.invalidations) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    const expiresAt = Math.min(Date.now() + TTL_MS, notAfter?.getTime() ?? Number.POSITIVE_INFINITY);
    this.entries.set(hash, { principal, via, expiresAt });
  }

  /** `*` drops everything (membership, role or tier changes); otherwise one credential hash. */
  invalidate(key: string): void {
    this.invalidations++;
    if (key === '*') this.entries.clear();
    else this.entries.delete(key);
    for (const listener of this.listeners) {
      try {
        listener(key);
      } catch {
        // A listener's failure must not stop the others (or the invalidation).
      }
    }
  }

  /**
   * Resolves at the next invalidation of `key` (or after `timeoutMs`). Taken right after
   * `invalidateCredential` and awaited after the commit, it waits for the NOTIFY to come back to
   * this instance: PostgreSQL has then dispatched it to every listening instance too, so a change
   * answered to the caller applies on every instance's next request.
   */
  echo(key: string, timeoutMs = 2_000): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop();
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref?.();
      const stop = this.onInvalidate((k) => {
        if (k === key) done();
      });
    });
  }

  /** Called with every invalidated key (`*` included), local or from another instance: long-lived streams re-check. */
  onInvalidate(listener: (key: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Drops a credential (hash) or everything (`*`) from every instance's cache once the transaction commits. */
export async function invalidateCredential(tx: Tx, cache: PrincipalCache, key: string): Promise<void> {
  cache.invalidate(key);
  await tx.execute(sql`SELECT pg_notify(${AUTH_CHANNEL}, ${key})`);
}
