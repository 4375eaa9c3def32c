// Roles and row-level security. The migrations apply them (drizzle/0007_tenant_rls.sql and
// atrium_protect_tenant_table for every later tenant table); a start only verifies them with catalog
// reads, so it never takes a lock that waits behind running queries (rolling deploys).
//
// atrium_app    — every request transaction; RLS limits it to app.workspace_id.
// atrium_system — explicit cross-tenant platform work (auth lookups, workers); sees all rows.

export const APP_ROLE = 'atrium_app';
export const SYSTEM_ROLE = 'atrium_system';

/** Tables without workspace_id that the app role may read for its current workspace only. */
export const DIRECTORY_TABLES = ['users', 'workspaces', 'organizations'] as const;

export type CatalogQuery = <T>(sqlText: string) => Promise<T[]>;

export class TenantSecurityError extends Error {
  override name = 'TenantSecurityError';
}

interface TableState {
  table: string;
  tenant: boolean;
  rls: boolean;
  forced: boolean;
  policies: string[] | null;
  app_select: boolean;
}

/**
 * Fails loudly, naming the table, when a tenant table (one with workspace_id) or a directory table is
 * not protected: RLS enabled and FORCED, its policies present, and readable by the app role.
 */
export async function verifyTenantSecurity(query: CatalogQuery): Promise<void> {
  const roles = await query<{ rolname: string }>(
    `SELECT rolname FROM pg_roles WHERE rolname IN ('${APP_ROLE}', '${SYSTEM_ROLE}')`,
  );
  for (const role of [APP_ROLE, SYSTEM_ROLE]) {
    if (!roles.some((r) => r.rolname === role)) {
      throw new TenantSecurityError(`role ${role} is missing: the migration 0007_tenant_rls has not run`);
    }
  }
  const directory = DIRECTORY_TABLES.map((t) => `'${t}'`).join(', ');
  const rows = await query<TableState>(
    `SELECT c.relname AS "table",
            EXISTS (SELECT 1 FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped) AS tenant,
            c.relrowsecurity AS rls, c.relforcerowsecurity AS forced,
            (SELECT array_agg(p.polname::text) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies,
            has_table_privilege('${APP_ROLE}', c.oid, 'SELECT')
              OR has_any_column_privilege('${APP_ROLE}', c.oid, 'SELECT') AS app_select
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
        AND (c.relname IN (${directory}) OR EXISTS (SELECT 1 FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped))
      ORDER BY c.relname`,
  );
  const problems: string[] = [];
  for (const name of DIRECTORY_TABLES) {
    if (!rows.some((r) => r.table === name)) problems.push(`table ${name} is missing`);
  }
  for (const row of rows) {
    const fix = row.tenant
      ? `add SELECT atrium_protect_tenant_table('${row.table}'); to its migration`
      : 'see drizzle/0007_tenant_rls.sql';
    const needed = row.tenant ? ['tenant_isolation', 'system_access'] : ['tenant_read', 'system_access'];
    const missing = needed.filter((p) => !(row.policies ?? []).includes(p));
    if (!row.rls || !row.forced) problems.push(`table ${row.table} has no forced row-level security: ${fix}`);
    else if (missing.length > 0) problems.push(`table ${row.table} lacks the policy ${missing.join(', ')}: ${fix}`);
    else if (!row.app_select) problems.push(`table ${row.table} is not readable by ${APP_ROLE}: ${fix}`);
  }
  if (problems.length > 0) {
    throw new TenantSecurityError(`Tenant isolation is not in place, refusing to start:\n  ${problems.join('\n  ')}`);
  }
}
