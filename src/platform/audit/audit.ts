import { type SQL, sql } from 'drizzle-orm';
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

/**
 * The same audit row as `writeAudit`, as a statement to embed in a module's own data-modifying CTE
 * (`WITH …, audit AS (${auditInsertSql(…, sql`EXISTS (SELECT 1 FROM inserted)`)}) …`), so a hot path
 * writes its change and its audit row in one round trip. The row is written only when `when` holds.
 * With `from` (a CTE of the same statement, e.g. `sql\`c\``), `when` and `more` may use its columns:
 * `more` is a jsonb expression merged over `data` (say, the provider of the row just read).
 */
export function auditInsertSql(
  actor: AuditActor,
  kind: AuditKind,
  data: Record<string, unknown>,
  when: SQL = sql`true`,
  options: { from?: SQL; more?: SQL } = {},
): { id: string; statement: SQL } {
  const id = newId('aud');
  const json = options.more
    ? sql`${JSON.stringify(data)}::jsonb || ${options.more}`
    : sql`${JSON.stringify(data)}::jsonb`;
  const statement = sql`INSERT INTO audit_log (workspace_id, id, kind, actor_user_id, request_id, data)
    SELECT ${actor.workspaceId}, ${id}, ${kind}, ${actor.userId ?? null}, ${actor.requestId ?? null}, ${json}
      ${options.from ? sql`FROM ${options.from}` : sql``}
     WHERE ${when}`;
  return { id, statement };
}
