import { and, asc, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Principal } from '../../platform/auth/principals.js';
import type { Tx } from '../../platform/db/client.js';
import { lockUntilCommit, queryRows } from '../../platform/db/tenant.js';
import {
  apiTokens,
  invitations,
  memberships,
  organizations,
  passwordResets,
  sessions,
  users,
  workspaces,
} from './tables.js';

export type WorkspaceRow = typeof workspaces.$inferSelect;
export type UserRow = typeof users.$inferSelect;

const principalColumns = {
  userId: memberships.userId,
  workspaceId: memberships.workspaceId,
  organizationId: workspaces.organizationId,
  tier: workspaces.tier,
  role: memberships.role,
  isProvider: memberships.isProvider,
};

/**
 * System-scope lookups: the workspace is not known until the credential is. A token found is marked used (its
 * `last_used_at`, which the token lists show), at most once a minute: this runs when the credential cache (30 s)
 * has no answer, not on every request, so the time is right to about a minute.
 */
export async function findPrincipalByTokenHash(tx: Tx, hash: string): Promise<Principal | undefined> {
  const [row] = await tx
    .select(principalColumns)
    .from(apiTokens)
    .innerJoin(
      memberships,
      and(eq(memberships.workspaceId, apiTokens.workspaceId), eq(memberships.userId, apiTokens.userId)),
    )
    .innerJoin(workspaces, eq(workspaces.id, apiTokens.workspaceId))
    .where(eq(apiTokens.tokenHash, hash));
  if (row) {
    await tx
      .update(apiTokens)
      .set({ lastUsedAt: sql`now()` })
      .where(
        and(
          eq(apiTokens.tokenHash, hash),
          or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, sql`now() - interval '1 minute'`)),
        ),
      );
  }
  return row;
}

export async function findPrincipalBySessionHash(
  tx: Tx,
  hash: string,
): Promise<(Principal & { sessionExpiresAt: Date }) | undefined> {
  const [row] = await tx
    .select({ ...principalColumns, sessionId: sessions.id, sessionExpiresAt: sessions.expiresAt })
    .from(sessions)
    .innerJoin(
      memberships,
      and(eq(memberships.workspaceId, sessions.workspaceId), eq(memberships.userId, sessions.userId)),
    )
    .innerJoin(workspaces, eq(workspaces.id, sessions.workspaceId))
    .where(and(eq(sessions.tokenHash, hash), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)));
  return row;
}

export async function findUserByEmail(tx: Tx, email: string): Promise<UserRow | undefined> {
  const [row] = await tx.select().from(users).where(eq(users.email, email.toLowerCase()));
  return row;
}

export async function findUser(tx: Tx, id: string): Promise<UserRow | undefined> {
  const [row] = await tx.select().from(users).where(eq(users.id, id));
  return row;
}

/**
 * Creates the user unless the e-mail is taken; returns the row (the existing one then: compare ids). Safe
 * when two requests add or invite the same new address at once: the second insert waits for the first to
 * commit, does nothing, and the read (a new statement, READ COMMITTED) sees the first one's user.
 */
export async function ensureUser(tx: Tx, row: typeof users.$inferInsert): Promise<UserRow> {
  await tx
    .insert(users)
    .values({ ...row, email: row.email.toLowerCase() })
    .onConflictDoNothing({ target: users.email });
  return (await findUserByEmail(tx, row.email))!;
}

export async function setUserPassword(tx: Tx, userId: string, passwordHash: string): Promise<void> {
  await tx.update(users).set({ passwordHash }).where(eq(users.id, userId));
}

/** No password: signing in with one is refused until a reset link sets a new one. */
export async function clearUserPassword(tx: Tx, userId: string): Promise<void> {
  await tx.update(users).set({ passwordHash: null }).where(eq(users.id, userId));
}

export async function membershipsOfUser(tx: Tx, userId: string) {
  return tx
    .select({
      id: workspaces.id,
      name: workspaces.name,
      tier: workspaces.tier,
      organizationId: workspaces.organizationId,
      timeZone: workspaces.timeZone,
      role: memberships.role,
      isProvider: memberships.isProvider,
      lastSignInAt: memberships.lastSignInAt,
    })
    .from(memberships)
    .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt), asc(workspaces.id));
}

export async function findWorkspace(tx: Tx, id: string): Promise<WorkspaceRow | undefined> {
  const [row] = await tx.select().from(workspaces).where(eq(workspaces.id, id));
  return row;
}

export async function insertWorkspace(tx: Tx, row: typeof workspaces.$inferInsert): Promise<WorkspaceRow> {
  const [created] = await tx.insert(workspaces).values(row).returning();
  return created;
}

export async function updateWorkspace(
  tx: Tx,
  id: string,
  patch: Partial<Pick<WorkspaceRow, 'name' | 'tier' | 'timeZone'>>,
): Promise<WorkspaceRow | undefined> {
  const [row] = await tx.update(workspaces).set(patch).where(eq(workspaces.id, id)).returning();
  return row;
}

export async function insertOrganization(tx: Tx, row: typeof organizations.$inferInsert) {
  const [created] = await tx.insert(organizations).values(row).returning();
  return created;
}

export async function findOrganization(tx: Tx, id: string) {
  const [row] = await tx.select().from(organizations).where(eq(organizations.id, id));
  return row;
}

export async function upsertMembership(tx: Tx, row: typeof memberships.$inferInsert): Promise<void> {
  await tx
    .insert(memberships)
    .values(row)
    .onConflictDoUpdate({
      target: [memberships.workspaceId, memberships.userId],
      set: { role: row.role, isProvider: row.isProvider ?? false },
    });
}

export async function workspaceMembers(tx: Tx, workspaceId: string) {
  return tx
    .select({
      userId: users.id,
      email: users.email,
      name: users.name,
      role: memberships.role,
      isProvider: memberships.isProvider,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.workspaceId, workspaceId))
    .orderBy(asc(users.name));
}

export async function insertApiToken(tx: Tx, row: typeof apiTokens.$inferInsert) {
  const [created] = await tx.insert(apiTokens).values(row).returning();
  return created;
}

export async function listApiTokens(tx: Tx, workspaceId: string, userId: string) {
  return tx
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
    })
    .from(apiTokens)
    .where(and(eq(apiTokens.workspaceId, workspaceId), eq(apiTokens.userId, userId)))
    .orderBy(sql`${apiTokens.id} DESC`);
}

/** Deletes a token; returns its hash (for cache invalidation) or undefined when there was none. */
export async function deleteApiToken(
  tx: Tx,
  workspaceId: string,
  userId: string,
  id: string,
): Promise<string | undefined> {
  const rows = await tx
    .delete(apiTokens)
    .where(and(eq(apiTokens.workspaceId, workspaceId), eq(apiTokens.userId, userId), eq(apiTokens.id, id)))
    .returning({ hash: apiTokens.tokenHash });
  return rows[0]?.hash;
}

export async function insertSession(tx: Tx, row: typeof sessions.$inferInsert): Promise<void> {
  await tx.insert(sessions).values(row);
}

/** Revokes a session; returns its token hash (for cache invalidation). */
export async function revokeSession(tx: Tx, sessionId: string): Promise<string | undefined> {
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: sql`now()` })
    .where(eq(sessions.id, sessionId))
    .returning({ hash: sessions.tokenHash });
  return rows[0]?.hash;
}

export async function moveSession(tx: Tx, sessionId: string, workspaceId: string): Promise<string | undefined> {
  const rows = await tx
    .update(sessions)
    .set({ workspaceId })
    .where(eq(sessions.id, sessionId))
    .returning({ hash: sessions.tokenHash });
  return rows[0]?.hash;
}

/** The user and every workspace they belong to, in one statement (GET /me runs on every page load). */
export async function userWithMemberships(tx: Tx, userId: string) {
  return tx
    .select({
      userId: users.id,
      email: users.email,
      userName: users.name,
      id: workspaces.id,
      name: workspaces.name,
      tier: workspaces.tier,
      organizationId: workspaces.organizationId,
      timeZone: workspaces.timeZone,
      role: memberships.role,
    })
    .from(users)
    .innerJoin(memberships, eq(memberships.userId, users.id))
    .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
    .where(eq(users.id, userId))
    .orderBy(asc(memberships.createdAt), asc(workspaces.id));
}

// ---- Workspace administration (contract §2a) ----

/** Members with when each last signed in to this workspace (kept on the membership: sessions are pruned). */
export async function workspaceMembersWithActivity(tx: Tx, workspaceId: string) {
  return tx
    .select({
      userId: users.id,
      email: users.email,
      name: users.name,
      role: memberships.role,
      isProvider: memberships.isProvider,
      lastSignInAt: memberships.lastSignInAt,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.workspaceId, workspaceId))
    .orderBy(asc(users.name), asc(users.id));
}

/**
 * Locks the workspace's admin memberships (FOR UPDATE) and returns their user ids: two admins
 * demoting or removing each other at once then serialize, so the workspace always keeps one.
 */
export async function lockAdmins(tx: Tx, workspaceId: string): Promise<string[]> {
  const rows = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, 'admin')))
    .for('update');
  return rows.map((r) => r.userId);
}

export async function findMembership(tx: Tx, workspaceId: string, userId: string) {
  const [row] = await tx
    .select()
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));
  return row;
}

export async function updateMembership(
  tx: Tx,
  workspaceId: string,
  userId: string,
  patch: { role?: 'admin' | 'member'; isProvider?: boolean },
): Promise<void> {
  await tx
    .update(memberships)
    .set(patch)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));
}

export async function deleteMembership(tx: Tx, workspaceId: string, userId: string): Promise<void> {
  await tx.delete(memberships).where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));
}

/** Deletes a user's API tokens in one workspace; returns their hashes (for cache invalidation). */
export async function deleteUserTokensIn(tx: Tx, workspaceId: string, userId: string): Promise<string[]> {
  const rows = await tx
    .delete(apiTokens)
    .where(and(eq(apiTokens.workspaceId, workspaceId), eq(apiTokens.userId, userId)))
    .returning({ hash: apiTokens.tokenHash });
  return rows.map((r) => r.hash);
}

/** Revokes a user's live sessions in one workspace; returns their hashes. */
export async function revokeUserSessionsIn(
  tx: Tx,
  workspaceId: string,
  userId: string,
  exceptSessionId?: string,
): Promise<string[]> {
  const conditions = [eq(sessions.workspaceId, workspaceId), eq(sessions.userId, userId), isNull(sessions.revokedAt)];
  if (exceptSessionId) conditions.push(sql`${sessions.id} <> ${exceptSessionId}`);
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: sql`now()` })
    .where(and(...conditions))
    .returning({ hash: sessions.tokenHash });
  return rows.map((r) => r.hash);
}

/** Every API token of the workspace with its owner (never the hash). */
export async function workspaceTokens(tx: Tx, workspaceId: string) {
  return tx
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      userId: users.id,
      userName: users.name,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.workspaceId, workspaceId))
    .orderBy(sql`${apiTokens.id} DESC`);
}

/** Deletes any token of the workspace (admin); returns its hash or undefined. */
export async function deleteWorkspaceToken(tx: Tx, workspaceId: string, id: string): Promise<string | undefined> {
  const rows = await tx
    .delete(apiTokens)
    .where(and(eq(apiTokens.workspaceId, workspaceId), eq(apiTokens.id, id)))
    .returning({ hash: apiTokens.tokenHash });
  return rows[0]?.hash;
}

// ---- Invitations ----

export type InvitationRow = typeof invitations.$inferSelect;

/** Invitations of the workspace not accepted yet (expired ones included: the admin sees them until re-sent or removed). */
export async function pendingInvitations(tx: Tx, workspaceId: string) {
  return tx
    .select()
    .from(invitations)
    .where(and(eq(invitations.workspaceId, workspaceId), isNull(invitations.acceptedAt)))
    .orderBy(asc(invitations.name), asc(invitations.userId));
}

/** The user's newest invitation to the workspace not accepted yet (expired included), if any. */
export async function pendingInvitationOf(tx: Tx, workspaceId: string, userId: string, opts: { lock?: boolean } = {}) {
  const query = tx
    .select()
    .from(invitations)
    .where(
      and(eq(invitations.workspaceId, workspaceId), eq(invitations.userId, userId), isNull(invitations.acceptedAt)),
    )
    .orderBy(desc(invitations.createdAt))
    .limit(1);
  // Locked: a cancel or an acceptance committing meanwhile is waited for, and the row read again after it (gone,
  // or accepted: none is returned), so the caller never acts on an invitation that no longer waits.
  const [row] = opts.lock ? await query.for('update') : await query;
  return row;
}

export async function insertInvitation(tx: Tx, row: typeof invitations.$inferInsert): Promise<void> {
  await tx.insert(invitations).values(row);
}

/** Drops a user's pending invitations to the workspace; returns how many there were. */
/**
 * Holds the workspace's invitations of one address until the transaction ends, so that two invitations
 * sent at once (a double click, two admins) run one after the other: the second replaces the first, as
 * a later one does, instead of both staying valid.
 */
export async function lockInvitationsOf(tx: Tx, workspaceId: string, email: string): Promise<void> {
  await lockUntilCommit(tx, `invitations:${workspaceId}:${email.toLowerCase()}`);
}

/** Deletes the user's invitations to the workspace not accepted yet; answers each one's expiry. */
export async function deletePendingInvitations(
  tx: Tx,
  workspaceId: string,
  userId: string,
): Promise<{ id: string; expiresAt: Date }[]> {
  return tx
    .delete(invitations)
    .where(
      and(eq(invitations.workspaceId, workspaceId), eq(invitations.userId, userId), isNull(invitations.acceptedAt)),
    )
    .returning({ id: invitations.id, expiresAt: invitations.expiresAt });
}

export async function updatePendingInvitations(
  tx: Tx,
  workspaceId: string,
  userId: string,
  patch: { role?: 'admin' | 'member'; isProvider?: boolean },
): Promise<number> {
  const rows = await tx
    .update(invitations)
    .set(patch)
    .where(
      and(eq(invitations.workspaceId, workspaceId), eq(invitations.userId, userId), isNull(invitations.acceptedAt)),
    )
    .returning({ id: invitations.id });
  return rows.length;
}

/** System scope (the invitee has no credential yet); locked so one token is accepted once. */
export async function lockInvitationByHash(tx: Tx, hash: string): Promise<InvitationRow | undefined> {
  const [row] = await tx.select().from(invitations).where(eq(invitations.tokenHash, hash)).for('update');
  return row;
}

export async function findInvitationByHash(tx: Tx, hash: string): Promise<InvitationRow | undefined> {
  const [row] = await tx.select().from(invitations).where(eq(invitations.tokenHash, hash));
  return row;
}

export async function markInvitationAccepted(tx: Tx, workspaceId: string, id: string): Promise<void> {
  await tx
    .update(invitations)
    .set({ acceptedAt: sql`now()` })
    .where(and(eq(invitations.workspaceId, workspaceId), eq(invitations.id, id)));
}

// ---- Password resets (system scope) ----

export async function insertPasswordReset(tx: Tx, row: typeof passwordResets.$inferInsert): Promise<void> {
  await tx.insert(passwordResets).values(row);
}

export async function findPasswordResetByHash(tx: Tx, hash: string) {
  const [row] = await tx.select().from(passwordResets).where(eq(passwordResets.tokenHash, hash));
  return row;
}

export async function lockPasswordResetByHash(tx: Tx, hash: string) {
  const [row] = await tx.select().from(passwordResets).where(eq(passwordResets.tokenHash, hash)).for('update');
  return row;
}

/** Marks every open reset of the user used (the one just taken and any older link). */
export async function usePasswordResets(tx: Tx, userId: string): Promise<void> {
  await tx
    .update(passwordResets)
    .set({ usedAt: sql`now()` })
    .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
}

/** Deletes every API token of the user in every workspace; returns their hashes. */
export async function deleteAllUserTokens(tx: Tx, userId: string): Promise<string[]> {
  const rows = await tx.delete(apiTokens).where(eq(apiTokens.userId, userId)).returning({ hash: apiTokens.tokenHash });
  return rows.map((r) => r.hash);
}

/** Revokes every live session of the user in every workspace (optionally but one); returns their hashes. */
export async function revokeAllUserSessions(tx: Tx, userId: string, exceptSessionId?: string): Promise<string[]> {
  const conditions = [eq(sessions.userId, userId), isNull(sessions.revokedAt)];
  if (exceptSessionId) conditions.push(sql`${sessions.id} <> ${exceptSessionId}`);
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: sql`now()` })
    .where(and(...conditions))
    .returning({ hash: sessions.tokenHash });
  return rows.map((r) => r.hash);
}

/**
 * Deletes up to `limit` sessions that ended (expired, or were revoked) before `endedBefore`, found through
 * sessions_ended_idx; rows another transaction holds are skipped (the next batch or run gets them), so a
 * batch never waits. System scope: a sweep across workspaces. Answers how many went.
 */
export async function pruneEndedSessions(tx: Tx, endedBefore: Date, limit: number): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    tx,
    sql`
    WITH ended AS (
      SELECT workspace_id, id FROM ${sessions}
       WHERE least(expires_at, revoked_at) < ${endedBefore.toISOString()}::timestamptz
       LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
    )
    DELETE FROM ${sessions} s USING ended
     WHERE s.workspace_id = ended.workspace_id AND s.id = ended.id
    RETURNING s.id`,
  );
  return rows.length;
}
