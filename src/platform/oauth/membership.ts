// Whether the member who started connecting still is one. The platform owns no users (it imports no
// module): the module that does (identity) registers the check when the app is built.
import type { Tx } from '../db/client.js';
import { invalidState } from './state.js';

/**
 * True when `userId` is a member of `workspaceId`, read in `tx` and holding that membership until the
 * transaction ends (a removal running at the same time waits, then destroys what was stored; or it
 * went first and the check answers false).
 */
export type MembershipCheck = (tx: Tx, workspaceId: string, userId: string) => Promise<boolean>;

let registered: MembershipCheck | undefined;

/** Called by the module owning memberships (identity) when the app is built. */
export function registerMembershipCheck(check: MembershipCheck): void {
  registered = check;
}

/** 400 `invalid_state` when the user who started the flow is no longer a member of its workspace. */
export async function requireMember(tx: Tx, workspaceId: string, userId: string): Promise<void> {
  if (!registered) throw new Error('No MembershipCheck registered (the identity module registers one)');
  if (!(await registered(tx, workspaceId, userId))) {
    throw invalidState('The user who started connecting is no longer a member of this workspace; nothing was stored');
  }
}
