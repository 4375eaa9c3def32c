// Roles and row-level security. Runs at start after migrations, as the owner role.
//
// atrium_app    — every request transaction; RLS limits it to app.workspace_id.
// atrium_system — explicit cross-tenant platform work (auth lookups, workers); sees all rows.
// Every table with a workspace_id column gets RLS enabled and FORCED, so no tenant table
// can be added without isolation.

export const APP_ROLE = 'atrium_app';
export const SYSTEM_ROLE = 'atrium_system';

export interface OwnerSql {
  exec(sqlText: string): Promise<void>;
  query<T>(sqlText: string, params?: unknown[]): Promise<T[]>;
}

async function ensureRole(owner: OwnerSql, role: string): Promise<void> {
  const exists = await owner.query<{ n: number }>('SELECT 1 AS n FROM pg_roles WHERE rolname = $1', [role]);
  if (exists.length > 0) return;
  try {
    await owner.exec(`CREATE ROLE ${role} NOLOGIN`);
  } catch (err) {
    // Another database on the same server (or a parallel start) created it first: roles are cluster-wide.
    const code = (err as { code?: string }).code;
    if (code !== '42710' && code !== 'XX000' && code !== '23505') throw err;
  }
}

export async function applyTenantSecurity(owner: OwnerSql): Promise<void> {
  await ensureRole(owner, APP_ROLE);
  await ensureRole(owner, SYSTEM_ROLE);
  // A non-superuser owner must be a member of both roles to SET ROLE into them.
  await owner.exec(`GRANT ${APP_ROLE}, ${SYSTEM_ROLE} TO CURRENT_USER`).catch(() => undefined);
  await owner.exec(
    `GRANT USAGE ON SCHEMA public TO ${APP_ROLE}, ${SYSTEM_ROLE};
     GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${APP_ROLE}, ${SYSTEM_ROLE};
     REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM ${APP_ROLE}, ${SYSTEM_ROLE};`,
  );
  const tables = await owner.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND c.column_name = 'workspace_id' AND t.table_type = 'BASE TABLE'`,
  );
  const policies = await owner.query<{ tablename: string; policyname: string }>(
    `SELECT tablename, policyname FROM pg_policies WHERE schemaname = 'public'`,
  );
  const has = new Set(policies.map((p) => `${p.tablename}.${p.policyname}`));
  for (const { table_name: table } of tables) {
    const statements = [
      `ALTER TABLE "${table}" ENABLE ROW LEVEL SECURITY`,
      `ALTER TABLE "${table}" FORCE ROW LEVEL SECURITY`,
    ];
    if (!has.has(`${table}.tenant_isolation`)) {
      statements.push(
        `CREATE POLICY tenant_isolation ON "${table}" FOR ALL TO ${APP_ROLE}
           USING (workspace_id = nullif(current_setting('app.workspace_id', true), ''))
           WITH CHECK (workspace_id = nullif(current_setting('app.workspace_id', true), ''))`,
      );
    }
    if (!has.has(`${table}.system_access`)) {
      statements.push(
        `CREATE POLICY system_access ON "${table}" FOR ALL TO ${SYSTEM_ROLE} USING (true) WITH CHECK (true)`,
      );
    }
    await owner.exec(statements.join(';\n'));
  }

  await applyDirectorySecurity(owner, has);
}

const CURRENT_WORKSPACE = "nullif(current_setting('app.workspace_id', true), '')";

/**
 * Users, workspaces and organizations have no workspace_id but are tenant-visible too: the app role
 * may read only the members, the workspace and the organization of its current workspace, may not
 * write them at all, and never sees password hashes (sign-in reads them as the system role).
 */
async function applyDirectorySecurity(owner: OwnerSql, has: Set<string>): Promise<void> {
  const readable: Record<string, string> = {
    users: `EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = users.id AND m.workspace_id = ${CURRENT_WORKSPACE})`,
    workspaces: `id = ${CURRENT_WORKSPACE}`,
    organizations: `id IN (SELECT w.organization_id FROM workspaces w WHERE w.id = ${CURRENT_WORKSPACE})`,
  };
  for (const [table, predicate] of Object.entries(readable)) {
    const statements = [
      `ALTER TABLE "${table}" ENABLE ROW LEVEL SECURITY`,
      `ALTER TABLE "${table}" FORCE ROW LEVEL SECURITY`,
      `REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON "${table}" FROM ${APP_ROLE}`,
    ];
    if (!has.has(`${table}.tenant_read`)) {
      statements.push(`CREATE POLICY tenant_read ON "${table}" FOR SELECT TO ${APP_ROLE} USING (${predicate})`);
    }
    if (!has.has(`${table}.system_access`)) {
      statements.push(
        `CREATE POLICY system_access ON "${table}" FOR ALL TO ${SYSTEM_ROLE} USING (true) WITH CHECK (true)`,
      );
    }
    await owner.exec(statements.join(';\n'));
  }
  await owner.exec(
    `REVOKE SELECT ON users FROM ${APP_ROLE}; GRANT SELECT (id, email, name, created_at) ON users TO ${APP_ROLE}`,
  );
}
