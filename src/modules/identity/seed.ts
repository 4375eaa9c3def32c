// Demo data of identity: the organization, its two workspaces and their people (patients etc. seed
// after this, from what it leaves in the seed state).
import { and, eq, inArray } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { hashPassword } from '../../platform/auth/passwords.js';
import type { RequestContext, Tier } from '../../platform/context.js';
import { withSystem } from '../../platform/db/tenant.js';
import type { SeedState } from '../../platform/module.js';
/** Published in the README: which is why production never creates these accounts. */
import { DEMO_PASSWORD, DEMO_USERS } from './demo-accounts.js';
import { addMember, createOrganization, createWorkspace, OPERATOR_TOKEN_NAME } from './service.js';
import { apiTokens } from './tables.js';

export { DEMO_PASSWORD, DEMO_USERS };

export type DemoWorkspaceName = (typeof DEMO_USERS)[number]['workspaces'][number];

/** What identity's demo seed created, for the modules seeding after it. */
export interface DemoTenancy {
  organization: { id: string; name: string };
  workspaces: Record<DemoWorkspaceName, { id: string; name: string; tier: Tier; adminUserId: string }>;
  /** User ids by e-mail. */
  userIds: Record<string, string>;
}

const KEY = 'identity';

export function demoTenancy(state: SeedState): DemoTenancy {
  const tenancy = state[KEY] as DemoTenancy | undefined;
  if (!tenancy) throw new Error('The identity module seeds before the modules using its demo tenancy');
  return tenancy;
}

/** A request context of the workspace's demo admin, for seeds that write through module services. */
export function demoAdminContext(app: FastifyInstance, state: SeedState, workspace: DemoWorkspaceName): RequestContext {
  const tenancy = demoTenancy(state);
  const ws = tenancy.workspaces[workspace];
  return {
    workspaceId: ws.id,
    organizationId: tenancy.organization.id,
    tier: ws.tier,
    userId: ws.adminUserId,
    role: 'admin',
    isProvider: false,
    requestId: 'seed',
    log: app.log,
    via: 'system',
  };
}

/** A request context of one of the demo people in a workspace, with their role and provider flag from DEMO_USERS. */
export function demoMemberContext(
  app: FastifyInstance,
  state: SeedState,
  workspace: DemoWorkspaceName,
  email: (typeof DEMO_USERS)[number]['email'],
): RequestContext {
  const user = DEMO_USERS.find((u) => u.email === email);
  if (!user || !(user.workspaces as readonly string[]).includes(workspace)) {
    throw new Error(`${email} is not a demo member of ${workspace}`);
  }
  return {
    ...demoAdminContext(app, state, workspace),
    userId: demoTenancy(state).userIds[email],
    role: user.role,
    isProvider: 'provider' in user ? user.provider : false,
  };
}

export async function seedIdentity(app: FastifyInstance, state: SeedState): Promise<void> {
  const deps = app.atrium;
  // The published demo password, hashed once for every demo account (demo-password.test.ts keeps it
  // within the password policy that requests are held to).
  const demo = { passwordHash: await hashPassword(DEMO_PASSWORD) };
  const org = await createOrganization(deps, 'Riverside Care Group');
  const clinic = await createWorkspace(
    deps,
    {
      name: 'Riverside Clinic',
      // The demo calendars' appointments are set in New York time (calendar/seed.ts).
      timeZone: 'America/New_York',
      tier: 'enterprise',
      organizationId: org.id,
      admin: { email: DEMO_USERS[0].email, name: DEMO_USERS[0].name },
    },
    demo,
  );
  const harbor = await createWorkspace(
    deps,
    {
      name: 'Harbor Therapy',
      timeZone: 'America/New_York',
      tier: 'standard',
      organizationId: org.id,
      admin: { email: DEMO_USERS[3].email, name: DEMO_USERS[3].name },
    },
    demo,
  );
  const workspaces: DemoTenancy['workspaces'] = {
    'Riverside Clinic': { ...clinic.workspace, adminUserId: clinic.admin.userId },
    'Harbor Therapy': { ...harbor.workspace, adminUserId: harbor.admin.userId },
  };
  const userIds: Record<string, string> = {
    [DEMO_USERS[0].email]: clinic.admin.userId,
    [DEMO_USERS[3].email]: harbor.admin.userId,
  };
  for (const user of DEMO_USERS) {
    for (const ws of user.workspaces) {
      // The admin the workspace was made with is a member already (once in its audit log, not twice).
      const madeWith = workspaces[ws].adminUserId === userIds[user.email];
      if (madeWith && user.role === 'admin' && !('provider' in user && user.provider)) continue;
      const added = await addMember(
        deps,
        workspaces[ws].id,
        {
          email: user.email,
          name: user.name,
          role: user.role,
          isProvider: 'provider' in user ? user.provider : false,
        },
        demo,
      );
      userIds[user.email] = added.userId;
    }
  }
  // The API tokens the operator's calls hand out with each account are for an API client that made the
  // accounts; nobody in the demo has one to use, and each person's Account page would list one they never made.
  await withSystem(deps.db, (tx) =>
    tx
      .delete(apiTokens)
      .where(
        and(
          inArray(apiTokens.workspaceId, [clinic.workspace.id, harbor.workspace.id]),
          eq(apiTokens.name, OPERATOR_TOKEN_NAME),
        ),
      ),
  );
  const tenancy: DemoTenancy = { organization: org, workspaces, userIds };
  state[KEY] = tenancy;
}
