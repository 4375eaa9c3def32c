// Per-account documents of the calendar emulators in `emulator_state`: read per request, changed
// under a row lock, so several app instances (and restarts) see one state.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.js';
import { withSystem } from '../../platform/db/tenant.js';
import { emulatorState } from '../../platform/platform-tables.js';

export async function readDoc<T>(db: Db, emulator: string, key: string): Promise<T | undefined> {
  const [row] = await withSystem(db, (tx) =>
    tx
      .select({ data: emulatorState.data })
      .from(emulatorState)
      .where(and(eq(emulatorState.emulator, emulator), eq(emulatorState.key, key))),
  );
  return row?.data as T | undefined;
}

/** Runs `change` on the document (created from `initial` when missing) under a lock and stores the result. */
export async function updateDoc<T, R>(
  db: Db,
  emulator: string,
  key: string,
  initial: () => T,
  change: (doc: T) => R,
): Promise<R> {
  return withSystem(db, async (tx) => {
    await tx
      .insert(emulatorState)
      .values({ emulator, key, data: initial() as object })
      .onConflictDoNothing();
    const [row] = await tx
      .select({ data: emulatorState.data })
      .from(emulatorState)
      .where(and(eq(emulatorState.emulator, emulator), eq(emulatorState.key, key)))
      .for('update');
    const doc = row.data as T;
    const result = change(doc);
    await tx
      .update(emulatorState)
      .set({ data: doc as object, updatedAt: sql`now()` })
      .where(and(eq(emulatorState.emulator, emulator), eq(emulatorState.key, key)));
    return result;
  });
}

export interface OAuthDoc {
  generation: number;
  revoked: string[];
  /** Authorization codes already exchanged (nonce → expiry, ms): a code is good for one exchange. */
  redeemed?: Record<string, number>;
}
export const OAUTH_KEY = '__oauth';
export const oauthInitial = (): OAuthDoc => ({ generation: 0, revoked: [] });
