import type { Tx } from '../db/client.js';
import { newId } from '../ids.js';
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
