// identity's implementation of the platform's PrincipalResolver (registered by the module's init).
import type { PrincipalResolver } from '../../platform/auth/principals.js';
import { findPrincipalBySessionHash, findPrincipalByTokenHash, findWorkspace } from './repository.js';

export const identityPrincipals: PrincipalResolver = {
  byTokenHash: findPrincipalByTokenHash,
  bySessionHash: findPrincipalBySessionHash,
  workspaceName: async (tx, workspaceId) => (await findWorkspace(tx, workspaceId))?.name,
};
