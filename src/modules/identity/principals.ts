// identity's implementation of the platform's PrincipalResolver (registered by the module's init).
import type { PrincipalResolver } from '../../platform/auth/principals.js';
import { findPrincipalBySessionHash, findPrincipalByTokenHash } from './repository.js';

export const identityPrincipals: PrincipalResolver = {
  byTokenHash: findPrincipalByTokenHash,
  bySessionHash: findPrincipalBySessionHash,
};
