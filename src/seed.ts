import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { addMember, createOrganization, createWorkspace } from './modules/identity/service.js';
import { addAuthorization, createPatient } from './modules/patients/service.js';
import type { RequestContext } from './platform/context.js';
import { queryRows, withSystem } from './platform/db/tenant.js';

/** Published in the README: which is why production never creates these accounts. */
export const DEMO_PASSWORD = 'atrium-demo-2026';

export const DEMO_USERS = [
  {
    email: 'admin@riverside.example',
    name: 'Avery Admin',
    role: 'admin',
    workspaces: ['Riverside Clinic', 'Harbor Therapy'],
  },
  {
    email: 'dr.lee@riverside.example',
    name: 'Dr. Morgan Lee',
    role: 'member',
    provider: true,
    workspaces: ['Riverside Clinic'],
  },
  { email: 'sam@riverside.example', name: 'Sam Rivera', role: 'member', workspaces: ['Riverside Clinic'] },
  { email: 'jordan@harbor.example', name: 'Jordan Park', role: 'admin', workspaces: ['Harbor Therapy'] },
  { email: 'casey@harbor.example', name: 'Casey Kim', role: 'member', provider: true, workspaces: ['Harbor Therapy'] },
] as const;

export async function isEmpty(app: FastifyInstance): Promise<boolean> {
  const rows = await withSystem(app.atrium.db, (tx) =>
    queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM workspaces`),
  );
  return Number(rows[0]?.n ?? 0) === 0;
}

/** Whether this start creates the demo organization: on a new database, and never in production. */
export function shouldSeedDemo(config: Config, databaseEmpty: boolean): boolean {
  if (config.env === 'production' || !databaseEmpty) return false;
  return config.seedDemo === 'auto' ? !config.databaseUrl : config.seedDemo;
}

/** The demo organization: an Enterprise and a Standard workspace, admins, members, providers, patients. */
export async function seedDemo(app: FastifyInstance) {
  const deps = app.atrium;
  // Its accounts' password is published: production never creates an account anyone can sign in to.
  if (deps.config.env === 'production') {
    throw new Error('The demo organization is never created in production (its password is published)');
  }
  const org = await createOrganization(deps, 'Riverside Care Group');
  const clinic = await createWorkspace(deps, {
    name: 'Riverside Clinic',
    tier: 'enterprise',
    organizationId: org.id,
    admin: { email: DEMO_USERS[0].email, name: DEMO_USERS[0].name, password: DEMO_PASSWORD },
  });
  const harbor = await createWorkspace(deps, {
    name: 'Harbor Therapy',
    tier: 'standard',
    organizationId: org.id,
    admin: { email: DEMO_USERS[3].email, name: DEMO_USERS[3].name, password: DEMO_PASSWORD },
  });
  const ids: Record<string, string> = {
    'Riverside Clinic': clinic.workspace.id,
    'Harbor Therapy': harbor.workspace.id,
  };
  const userIds: Record<string, string> = {};
  for (const user of DEMO_USERS) {
    for (const ws of user.workspaces) {
      const added = await addMember(deps, ids[ws], {
        email: user.email,
        name: user.name,
        role: user.role,
        isProvider: 'provider' in user ? user.provider : false,
        password: DEMO_PASSWORD,
      });
      userIds[user.email] = added.userId;
    }
  }
  const ctx = (workspaceId: string, tier: RequestContext['tier'], userId: string): RequestContext => ({
    workspaceId,
    organizationId: org.id,
    tier,
    userId,
    role: 'admin',
    isProvider: false,
    requestId: 'seed',
    log: app.log,
    via: 'system',
  });
  const clinicCtx = ctx(clinic.workspace.id, 'enterprise', clinic.admin.userId);
  const drLee = userIds['dr.lee@riverside.example'];
  const patients = [
    {
      givenName: 'Eleanor',
      familyName: 'Vance',
      dateOfBirth: '1958-03-14',
      mrn: 'RC-1001',
      preferredProviderId: drLee,
    },
    { givenName: 'Marcus', familyName: 'Okafor', dateOfBirth: '1987-11-02', mrn: 'RC-1002' },
    {
      givenName: 'Priya',
      familyName: 'Natarajan',
      dateOfBirth: '2001-07-21',
      mrn: 'RC-1003',
      preferredProviderId: drLee,
    },
  ];
  const created = [];
  for (const p of patients) created.push(await createPatient(deps, clinicCtx, p));
  await addAuthorization(deps, clinicCtx, created[0].id, {
    service: 'physical-therapy',
    units: 12,
    unitMinutes: 45,
    validFrom: '2026-11-01',
    validTo: '2027-02-28',
  });
  const harborCtx = ctx(harbor.workspace.id, 'standard', harbor.admin.userId);
  await createPatient(deps, harborCtx, {
    givenName: 'Tomas',
    familyName: 'Lindqvist',
    dateOfBirth: '1975-05-30',
    mrn: 'HT-2001',
  });
  return { organization: org, workspaces: [clinic.workspace, harbor.workspace] };
}
