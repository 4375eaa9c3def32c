import { and, desc, eq, gte, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { auditLog } from '../../platform/platform-tables.js';

export type AuditRow = typeof auditLog.$inferSelect;

export interface AuditFilter {
  kind?: string;
  actorUserId?: string;
  patientId?: string;
  from?: Date;
  to?: Date;
}

/** Audit rows matching the filter, newest first, older than the `before` id; `limit` rows at most. */
export async function findAuditRows(
  tx: Tx,
  workspaceId: string,
  filter: AuditFilter,
  limit: number,
  before?: string,
): Promise<AuditRow[]> {
  return tx
    .select()
    .from(auditLog)
    .where(
      and(
        eq(auditLog.workspaceId, workspaceId),
        filter.kind ? eq(auditLog.kind, filter.kind) : undefined,
        filter.actorUserId ? eq(auditLog.actorUserId, filter.actorUserId) : undefined,
        // Same expression as audit_patient_idx.
        filter.patientId ? sql`(${auditLog.data}->>'patientId') = ${filter.patientId}` : undefined,
        filter.from ? gte(auditLog.at, filter.from) : undefined,
        filter.to ? lt(auditLog.at, filter.to) : undefined,
        before ? lt(auditLog.id, before) : undefined,
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(limit);
}
