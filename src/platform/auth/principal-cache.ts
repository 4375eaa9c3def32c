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

  get(hash: string): Entry | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry;
  }

  set(hash: string, principal: Principal, via: Entry['via'], notAfter?: Date): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    const expiresAt = Math.min(Date.now() + TTL_MS, notAfter?.getTime() ?? Number.POSITIVE_INFINITY);
    this.entries.set(hash, { principal, via, expiresAt });
  }

  /** `*` drops everything (membership, role or tier changes); otherwise one credential hash. */
  invalidate(key: string): void {
    if (key === '*') this.entries.clear();
    else this.entries.delete(key);
  }
}

/** Drops a credential (hash) or everything (`*`) from every instance's cache once the transaction commits. */
export async function invalidateCredential(tx: Tx, cache: PrincipalCache, key: string): Promise<void> {
  cache.invalidate(key);
  await tx.execute(sql`SELECT pg_notify(${AUTH_CHANNEL}, ${key})`);
}
