// The identity module's public entry: the only file other code imports from this module.
export { allWorkspaceIds, memberNames, userNames, workspaceProviders, workspaceTier } from './directory.js';
export { identityModule } from './module.js';
export type { CreateWorkspaceInput, MemberInput } from './schema.js';
export {
  DEMO_PASSWORD,
  DEMO_USERS,
  type DemoTenancy,
  demoAdminContext,
  demoMemberContext,
  demoTenancy,
} from './seed.js';
export {
  addMember,
  adminEmails,
  createOrganization,
  createWorkspace,
  isMember,
  lockPublishedPasswords,
  type MemberRemoval,
  type MemberRemovedHook,
  membershipStarts,
  onMemberRemoved,
  organizationWorkspacesOf,
  workspaceExists,
} from './service.js';
export { workspaceIdColumn } from './tables.js';
