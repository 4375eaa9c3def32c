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

/**
 * `phi_access` rows for the patients a reader was just shown (a record opened, a linked inbox
 * conversation listed), at most one per reader, patient and `context` per `window`: the trail says
 * who saw a patient's information, and where, without a row for every refresh. One statement, in
 * the caller's transaction (it commits with the read).
 */
export async function auditPhiShown(
  tx: Tx,
  actor: AuditActor,
  patientIds: readonly string[],
  context: string,
  window = '1 hour',
): Promise<void> {
  const input = [...new Set(patientIds)].map((patientId) => ({ p: patientId, id: newId('aud') }));
  if (input.length === 0) return;
  const actorId = actor.userId ?? null;
  await tx.execute(sql`
    INSERT INTO audit_log (workspace_id, id, kind, actor_user_id, request_id, data)
    SELECT ${actor.workspaceId}, x.id, 'phi_access', ${actorId}, ${actor.requestId ?? null},
           jsonb_build_object('patientId', x.p, 'context', ${context}::text)
      FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb) AS x(p text, id text)
     WHERE NOT EXISTS (
       SELECT 1 FROM audit_log a
        WHERE a.workspace_id = ${actor.workspaceId} AND (a.data->>'patientId') = x.p
          AND a.kind = 'phi_access' AND a.actor_user_id IS NOT DISTINCT FROM ${actorId}::text
          AND a.data->>'context' = ${context}::text AND a.at > now() - ${window}::interval)`);
}
