// Who a credential belongs to. The platform authenticates requests but owns no users: the module
// that does (identity) registers a PrincipalResolver at app build time (platform imports no module).
import type { Role, Tier } from '../context.js';
import type { Tx } from '../db/client.js';

export interface Principal {
  userId: string;
  workspaceId: string;
  organizationId: string | null;
  tier: Tier;
  role: Role;
  isProvider: boolean;
  sessionId?: string;
}

/** Looks credentials up by their SHA-256 hash, in a system-scope transaction (the workspace is not known yet). */
export interface PrincipalResolver {
  byTokenHash(tx: Tx, hash: string): Promise<Principal | undefined>;
  bySessionHash(tx: Tx, hash: string): Promise<(Principal & { sessionExpiresAt: Date }) | undefined>;
  /** A workspace's name (409 `workspace_changed` names the workspace the caller is in now). */
  workspaceName(tx: Tx, workspaceId: string): Promise<string | undefined>;
}

let registered: PrincipalResolver | undefined;

/** Called by the module owning users (identity) when the app is built. */
export function registerPrincipalResolver(resolver: PrincipalResolver): void {
  registered = resolver;
}

export function principalResolver(): PrincipalResolver {
  if (!registered) throw new Error('No PrincipalResolver registered (the identity module registers one)');
  return registered;
}
