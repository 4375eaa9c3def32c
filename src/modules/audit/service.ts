import { z } from 'zod';
import type { AuditEntry, AuditKind } from '../../platform/audit/audit.js';
import type { RequestContext } from '../../platform/context.js';
import { withTenant } from '../../platform/db/tenant.js';
import { csvRow } from '../../platform/http/csv.js';
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js';
import type { AppDeps } from '../../platform/types.js';
import { userNames } from '../identity/index.js';
import * as repo from './repository.js';
import { type AuditQuery, toRange } from './schema.js';

type AuditItem = AuditEntry & { requestId: string | null };

function presentEntry(r: repo.AuditRow): AuditItem {
  return {
    ...r.data,
    id: r.id,
    kind: r.kind as AuditKind,
    at: r.at.toISOString(),
    actorUserId: r.actorUserId,
    requestId: r.requestId,
  };
}

function filterOf(query: AuditQuery): repo.AuditFilter {
  return { kind: query.kind, actorUserId: query.actorUserId, patientId: query.patientId, ...toRange(query) };
}

/** One page of the workspace's audit rows matching the filters, newest first. */
export async function listAudit(deps: AppDeps, ctx: RequestContext, query: AuditQuery): Promise<Page<AuditItem>> {
  const before = decodeCursor(query.cursor, z.string());
  const rows = await withTenant(deps.db, ctx, (tx) =>
    repo.findAuditRows(tx, ctx.workspaceId, filterOf(query), query.limit + 1, before),
  );
  const page = toPage(rows, query.limit, (r) => r.id);
  return { items: page.items.map(presentEntry), nextCursor: page.nextCursor };
}

/** Columns of the CSV export: the members most kinds carry, then every other member as JSON. */
const CSV_COLUMNS = [
  'id',
  'at',
  'kind',
  'actorUserId',
  'requestId',
  'patientId',
  'action',
  'target',
  'reason',
  'outcome',
  'context',
] as const;
const CSV_BATCH = 1000;

/**
 * Every row matching the filters (from the cursor on, if one is given), newest first, as CSV text in
 * chunks: read in batches, each in its own short transaction, so a large export holds neither a
 * transaction open nor the whole log in memory. The first batch is read before returning, so a bad
 * cursor or a database error is still a problem response rather than a broken download.
 */
export async function exportAuditCsv(
  deps: AppDeps,
  ctx: RequestContext,
  query: AuditQuery,
): Promise<AsyncIterable<string>> {
  const filter = filterOf(query);
  // Each batch with the names of the people in it (a spreadsheet is read by people, not ids).
  const batch = (before: string | undefined) =>
    withTenant(deps.db, ctx, async (tx) => {
      const rows = await repo.findAuditRows(tx, ctx.workspaceId, filter, CSV_BATCH, before);
      const names = await userNames(
        tx,
        rows.flatMap((r) => (r.actorUserId ? [r.actorUserId] : [])),
      );
      return { rows, names };
    });
  const first = await batch(decodeCursor(query.cursor, z.string()));
  const [before, after] = [CSV_COLUMNS.slice(0, 4), CSV_COLUMNS.slice(4)];
  return (async function* () {
    yield csvRow([...before, 'actorName', ...after, 'details']);
    for (let page = first; ; page = await batch(page.rows[page.rows.length - 1].id)) {
      let chunk = '';
      for (const row of page.rows) {
        const entry = presentEntry(row);
        const rest = Object.fromEntries(
          Object.entries(entry).filter(([k]) => !(CSV_COLUMNS as readonly string[]).includes(k)),
        );
        const actorName = row.actorUserId ? (page.names.get(row.actorUserId) ?? null) : 'System';
        chunk += csvRow([
          ...before.map((c) => entry[c]),
          actorName,
          ...after.map((c) => entry[c]),
          Object.keys(rest).length ? rest : null,
        ]);
      }
      if (chunk) yield chunk;
      if (page.rows.length < CSV_BATCH) return;
    }
  })();
}
