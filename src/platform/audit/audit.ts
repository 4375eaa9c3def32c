import { and, desc, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../db/client.js';
import { newId } from '../ids.js';
import { decodeCursor, type Page, toPage } from '../pagination.js';
import { auditLog } from '../platform-tables.js';

export const AUDIT_KINDS = [
  'skill_invocation',
  'token_access',
  'phi_access',
  'message_send',
  'break_glass',
  'admin_action',
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditActor {
  workspaceId: string;
  userId?: string | null;
  requestId?: string;
}

export interface AuditEntry {
  id: string;
  kind: AuditKind;
  at: string;
  actorUserId: string | null;
  [member: string]: unknown;
}

/** Appends one audit row in the caller's transaction: it commits or rolls back with the change. */
export async function writeAudit(
  tx: Tx,
  actor: AuditActor,
  kind: AuditKind,
  data: Record<string, unknown>,
): Promise<string> {
  const id = newId('aud');
  await tx.insert(auditLog).values({
    workspaceId: actor.workspaceId,
    id,
    kind,
    actorUserId: actor.userId ?? null,
    requestId: actor.requestId ?? null,
    data,
  });
  return id;
}

export async function listAudit(
  tx: Tx,
  workspaceId: string,
  query: { kind?: AuditKind; limit: number; cursor?: string },
): Promise<Page<AuditEntry>> {
  const after = decodeCursor(query.cursor, z.string());
  const rows = await tx
    .select()
    .from(auditLog)
    .where(
      and(
        eq(auditLog.workspaceId, workspaceId),
        query.kind ? eq(auditLog.kind, query.kind) : undefined,
        after ? lt(auditLog.id, after) : undefined,
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(query.limit + 1);
  const page = toPage(rows, query.limit, (r) => r.id);
  return {
    nextCursor: page.nextCursor,
    items: page.items.map((r) => ({
      ...r.data,
      id: r.id,
      kind: r.kind as AuditKind,
      at: r.at.toISOString(),
      actorUserId: r.actorUserId,
      requestId: r.requestId,
    })),
  };
}
