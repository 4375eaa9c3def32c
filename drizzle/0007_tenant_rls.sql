-- Roles and row-level security, applied once here instead of on every start (a start only verifies
-- it, reading the catalog, so it takes no lock that waits behind running queries: rolling deploys).
--
-- atrium_app    — every request transaction; RLS limits it to app.workspace_id.
-- atrium_system — explicit cross-tenant platform work (auth lookups, workers); sees all rows.
--
-- A later migration that adds a tenant table (one with a workspace_id column) ends with
--   SELECT atrium_protect_tenant_table('my_table');
-- or the service refuses to start ("table my_table has no forced row-level security").

-- Roles are cluster-wide: another database on the same server (tests, a parallel start) may have
-- created them first.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'atrium_app') THEN
    CREATE ROLE atrium_app NOLOGIN;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
--> statement-breakpoint
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'atrium_system') THEN
    CREATE ROLE atrium_system NOLOGIN;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
--> statement-breakpoint
-- A non-superuser owner must be a member of both roles to SET ROLE into them (a superuser already
-- may; a missing membership shows at start, where SET ROLE fails loudly).
DO $$
BEGIN
  EXECUTE 'GRANT atrium_app, atrium_system TO ' || quote_ident(current_user);
EXCEPTION WHEN insufficient_privilege OR invalid_grant_operation THEN
  RAISE NOTICE 'could not grant atrium_app, atrium_system to %', current_user;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO atrium_app, atrium_system;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO atrium_app, atrium_system;
--> statement-breakpoint
-- Tables created by later migrations (run by this same owner) get the same grants.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO atrium_app, atrium_system;
--> statement-breakpoint
REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM atrium_app, atrium_system;
--> statement-breakpoint
-- Enables and forces RLS on a tenant table, with the tenant and system policies and the grants.
-- Idempotent: later migrations call it for each tenant table they add.
CREATE OR REPLACE FUNCTION atrium_protect_tenant_table(tbl regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', tbl);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', tbl);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO atrium_app, atrium_system', tbl);
  IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = tbl AND polname = 'tenant_isolation') THEN
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %s FOR ALL TO atrium_app'
      ' USING (workspace_id = nullif(current_setting(''app.workspace_id'', true), ''''))'
      ' WITH CHECK (workspace_id = nullif(current_setting(''app.workspace_id'', true), ''''))',
      tbl);
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = tbl AND polname = 'system_access') THEN
    EXECUTE format('CREATE POLICY system_access ON %s FOR ALL TO atrium_system USING (true) WITH CHECK (true)', tbl);
  END IF;
END $$;
--> statement-breakpoint
-- Every table that has a workspace_id column today.
SELECT atrium_protect_tenant_table(c.oid)
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
   AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped);
--> statement-breakpoint
-- Users, workspaces and organizations have no workspace_id but are tenant-visible too: the app role
-- may read only the members, the workspace and the organization of its current workspace, may not
-- write them at all, and never sees password hashes (sign-in reads them as the system role).
CREATE OR REPLACE FUNCTION atrium_protect_directory_table(tbl regclass, readable text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', tbl);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', tbl);
  EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %s FROM atrium_app', tbl);
  IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = tbl AND polname = 'tenant_read') THEN
    EXECUTE format('CREATE POLICY tenant_read ON %s FOR SELECT TO atrium_app USING (%s)', tbl, readable);
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = tbl AND polname = 'system_access') THEN
    EXECUTE format('CREATE POLICY system_access ON %s FOR ALL TO atrium_system USING (true) WITH CHECK (true)', tbl);
  END IF;
END $$;
--> statement-breakpoint
SELECT atrium_protect_directory_table('users',
  'EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = users.id AND m.workspace_id = nullif(current_setting(''app.workspace_id'', true), ''''))');
--> statement-breakpoint
SELECT atrium_protect_directory_table('workspaces', 'id = nullif(current_setting(''app.workspace_id'', true), '''')');
--> statement-breakpoint
SELECT atrium_protect_directory_table('organizations',
  'id IN (SELECT w.organization_id FROM workspaces w WHERE w.id = nullif(current_setting(''app.workspace_id'', true), ''''))');
--> statement-breakpoint
REVOKE SELECT ON users FROM atrium_app;
--> statement-breakpoint
GRANT SELECT (id, email, name, created_at) ON users TO atrium_app;
