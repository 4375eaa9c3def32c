import { and, desc, eq, lt } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { claims } from './tables.js';

export type ClaimRow = typeof claims.$inferSelect;

export async function insertClaim(tx: Tx, row: typeof claims.$inferInsert): Promise<ClaimRow> {
  const [created] = await tx.insert(claims).values(row).returning();
  return created;
}

export async function findClaim(tx: Tx, workspaceId: string, id: string): Promise<ClaimRow | undefined> {
  const [row] = await tx
    .select()
    .from(claims)
    .where(and(eq(claims.workspaceId, workspaceId), eq(claims.id, id)));
  return row;
}

export async function listClaims(
  tx: Tx,
  workspaceId: string,
  opts: { patientId?: string; status?: ClaimRow['status']; limit: number; before?: string },
): Promise<ClaimRow[]> {
  return tx
    .select()
    .from(claims)
    .where(
      and(
        eq(claims.workspaceId, workspaceId),
        opts.patientId ? eq(claims.patientId, opts.patientId) : undefined,
        opts.status ? eq(claims.status, opts.status) : undefined,
        opts.before ? lt(claims.id, opts.before) : undefined,
      ),
    )
    .orderBy(desc(claims.id))
    .limit(opts.limit + 1);
}

/** Adjudicates a submitted claim; undefined when it was already adjudicated (checked in the same statement). */
export async function adjudicateClaim(
  tx: Tx,
  workspaceId: string,
  id: string,
  patch: Pick<ClaimRow, 'status' | 'paidAmountCents' | 'denialReason'>,
): Promise<ClaimRow | undefined> {
  const [row] = await tx
    .update(claims)
    .set({ ...patch, adjudicatedAt: new Date() })
    .where(and(eq(claims.workspaceId, workspaceId), eq(claims.id, id), eq(claims.status, 'submitted')))
    .returning();
  return row;
}

export async function recentClaimsOfPatient(tx: Tx, workspaceId: string, patientId: string, limit: number) {
  return tx
    .select()
    .from(claims)
    .where(and(eq(claims.workspaceId, workspaceId), eq(claims.patientId, patientId)))
    .orderBy(desc(claims.submittedAt))
    .limit(limit);
}
