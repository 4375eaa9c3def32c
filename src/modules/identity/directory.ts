// What other modules may know about people: names of a workspace's members (never e-mails or
// credentials), read in the caller's transaction so RLS scopes them to its workspace.
import { and, eq, inArray } from 'drizzle-orm';
import type { Tier } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { memberships, users, workspaces } from './tables.js';

/** Members of the workspace among `userIds`, with their names. */
export async function memberNames(tx: Tx, workspaceId: string, userIds: string[]) {
  if (userIds.length === 0) return [];
  return tx
    .select({ userId: users.id, name: users.name })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.workspaceId, workspaceId), inArray(memberships.userId, userIds)));
}

/** Names of the users among `userIds` this transaction may see (unknown ids are left out). */
export async function userNames(tx: Tx, userIds: string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await tx
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(inArray(users.id, [...new Set(userIds)]));
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The workspace's care providers (members marked as providers), with their names. */
export async function workspaceProviders(tx: Tx, workspaceId: string) {
  return tx
    .select({ userId: users.id, name: users.name })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.isProvider, true)))
    .orderBy(users.name);
}

/** Every workspace's id (system transactions only: platform work across tenants, e.g. incident notices). */
export async function allWorkspaceIds(tx: Tx): Promise<string[]> {
  const rows = await tx.select({ id: workspaces.id }).from(workspaces);
  return rows.map((r) => r.id);
}

/** The workspace's tier (`undefined` for no such workspace), for work no signed-in user started (webhooks). */
export async function workspaceTier(tx: Tx, workspaceId: string): Promise<Tier | undefined> {
  const [row] = await tx.select({ tier: workspaces.tier }).from(workspaces).where(eq(workspaces.id, workspaceId));
  return row?.tier as Tier | undefined;
}
