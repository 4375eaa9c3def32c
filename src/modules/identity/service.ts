import { and, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { writeAudit } from '../../platform/audit/audit.js';
import { assertStrongPassword } from '../../platform/auth/password-policy.js';
import { hashPassword, verifyPassword } from '../../platform/auth/passwords.js';
import { invalidateCredential } from '../../platform/auth/principal-cache.js';
import {
  decrementCount,
  incrementCount,
  isMarked,
  MARK_WINDOW_MS,
  markKey,
  resetCount,
  takeBackoffSlot,
} from '../../platform/auth/rate-limit.js';
import { currentWorkspace, workspaceChanged } from '../../platform/auth/workspace-guard.js';
import type { RequestContext } from '../../platform/context.js';
import { randomToken, sha256Hex } from '../../platform/crypto.js';
import type { Tx } from '../../platform/db/client.js';
import { withSystem, withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { defineJob, enqueueJob } from '../../platform/jobs/jobs.js';
import { enqueueMail } from '../../platform/mail/mailer.js';
import { canonicalTimeZone } from '../../platform/time-zone-names.js';
import type { AppDeps } from '../../platform/types.js';
import { DEMO_PASSWORD, DEMO_USERS } from './demo-accounts.js';
import { userNames } from './directory.js';
import { meCacheFor } from './me-cache.js';
import * as repo from './repository.js';
import type { CreateWorkspaceInput, InvitationLookup, MemberInput } from './schema.js';
import { memberships } from './tables.js';

const present = (w: repo.WorkspaceRow) => ({
  id: w.id,
  name: w.name,
  tier: w.tier,
  organizationId: w.organizationId,
  timeZone: w.timeZone,
});
const presentUser = (u: repo.UserRow) => ({ id: u.id, email: u.email, name: u.name });

export interface SignInInput {
  email: string;
  password: string;
  workspaceId?: string;
  address: string;
  requestId: string;
}

const tooMany = (retryAfterMs: number, detail = 'Too many sign-in attempts; try again later') =>
  new AppError('rate_limited', 429, detail, {}, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) });

/**
 * Password sign-in; the same 401 for an unknown e-mail and a wrong password. Failed attempts are
 * throttled three ways, in the database so every instance shares them: per (account, address) with
 * exponential backoff after `accountLimit` failures (so someone guessing from elsewhere cannot lock
 * the owner out), per account from all addresses up to a much higher ceiling (distributed
 * guessing), and per address (`addressLimit`, spraying many accounts). Successes count for none.
 */
/** The password policy, with the published demo password refused too (for every account, in every environment). */
const strongPassword = (password: string, account: { email?: string; name?: string }) =>
  assertStrongPassword(password, { ...account, published: [DEMO_PASSWORD] });

export async function signIn(deps: AppDeps, input: SignInInput) {
  const { accountLimit, accountCeiling, addressLimit, windowMs, backoffMs } = deps.config.signIn;
  const email = input.email.toLowerCase();
  const pairKey = `signin:pair:${email}|${input.address}`;
  const accountKey = `signin:account:${email}`;
  const familiarKey = `signin:familiar:${email}|${input.address}`;
  const addressKey = `signin:address:${input.address}`;
  // Count first, then check: parallel guesses each take a slot, so none slips past a limit.
  const [pair, account, address] = await Promise.all([
    takeBackoffSlot(deps.db, pairKey, { threshold: accountLimit, baseDelayMs: backoffMs, windowMs }),
    incrementCount(deps.db, accountKey, windowMs),
    incrementCount(deps.db, addressKey, windowMs),
  ]);
  // Past the account's ceiling (failures from many addresses: a distributed guess), only an address the
  // owner signed in from before may still try, so the guessing cannot lock the owner out; elsewhere the
  // owner can still get in with a reset link, which clears the account's count.
  const ceilingReached = account.count > accountCeiling && !(await isMarked(deps.db, familiarKey, MARK_WINDOW_MS));
  const waits = [
    pair.allowed ? null : pair.retryAfterMs,
    ceilingReached ? account.resetInMs : null,
    address.count > addressLimit ? address.resetInMs : null,
  ].filter((w) => w !== null);
  if (waits.length > 0) {
    // A refused attempt checked no password: it is not a failure against the other limits.
    await Promise.all([decrementCount(deps.db, accountKey), decrementCount(deps.db, addressKey)]);
    throw tooMany(
      Math.max(...waits),
      ceilingReached
        ? 'Too many failed sign-ins on this account from many places. Sign in from a device you used before, or use “Forgot password” to get a link by e-mail.'
        : undefined,
    );
  }

  const user = await withSystem(deps.db, (tx) => repo.findUserByEmail(tx, input.email));
  // In production the README's demo password signs no one in, whoever holds it.
  const published = deps.config.env === 'production' && input.password === DEMO_PASSWORD;
  const valid = !published && (await verifyPassword(input.password, user?.passwordHash));
  const workspaces = valid && user ? await withSystem(deps.db, (tx) => repo.membershipsOfUser(tx, user.id)) : [];
  if (!valid || !user || workspaces.length === 0) {
    throw new AppError('unauthenticated', 401, 'Wrong e-mail or password');
  }
  await Promise.all([
    resetCount(deps.db, pairKey),
    decrementCount(deps.db, accountKey),
    decrementCount(deps.db, addressKey),
    markKey(deps.db, familiarKey),
  ]);
  const chosen = workspaces.find((w) => w.id === input.workspaceId) ?? workspaces[0];
  return openSession(deps, user, chosen, 'password');
}

type MembershipOfUser = Awaited<ReturnType<typeof repo.membershipsOfUser>>[number];

/** Opens a browser session in one of the user's workspaces (sign-in, accepted invitation). */
async function openSession(deps: AppDeps, user: repo.UserRow, chosen: MembershipOfUser, via: string) {
  const token = randomToken('ses');
  const sessionId = newId('ses');
  await withTenant(deps.db, { workspaceId: chosen.id }, async (tx) => {
    // The insert also sets the membership's last_sign_in_at (a trigger: migration 0039).
    await repo.insertSession(tx, {
      workspaceId: chosen.id,
      id: sessionId,
      userId: user.id,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(Date.now() + deps.config.sessionTtlMs),
    });
    if (chosen.role === 'admin') {
      await publishEvent(tx, { workspaceId: chosen.id }, 'auth.signed_in', {
        userId: user.id,
        email: user.email,
        role: chosen.role,
        via,
      });
    }
  });
  return {
    token,
    user: presentUser(user),
    workspace: {
      id: chosen.id,
      name: chosen.name,
      tier: chosen.tier,
      organizationId: chosen.organizationId,
      timeZone: chosen.timeZone,
    },
    role: chosen.role,
  };
}

export async function signOut(deps: AppDeps, sessionId: string): Promise<void> {
  await withSystem(deps.db, async (tx) => {
    const hash = await repo.revokeSession(tx, sessionId);
    if (hash) await invalidateCredential(tx, deps.principals, hash);
  });
}

export async function switchWorkspace(
  deps: AppDeps,
  ctx: RequestContext,
  sessionId: string | undefined,
  workspaceId: string,
) {
  if (!sessionId) throw new AppError('conflict', 409, 'API tokens are bound to one workspace; sign in to switch');
  const memberships = await withSystem(deps.db, (tx) => repo.membershipsOfUser(tx, ctx.userId));
  const target = memberships.find((m) => m.id === workspaceId);
  if (!target) throw notFound('Workspace');
  const user = await withSystem(deps.db, async (tx) => {
    // Moving the session sets the target membership's last_sign_in_at (a trigger: migration 0039).
    const hash = await repo.moveSession(tx, sessionId, workspaceId);
    if (hash) await invalidateCredential(tx, deps.principals, hash);
    return repo.findUser(tx, ctx.userId);
  });
  return {
    user: presentUser(user!),
    workspace: {
      id: target.id,
      name: target.name,
      tier: target.tier,
      organizationId: target.organizationId,
      timeZone: target.timeZone,
    },
    role: target.role,
  };
}

export async function getMe(deps: AppDeps, ctx: RequestContext) {
  const all = await meCacheFor(deps.principals).read(ctx.userId, () =>
    withSystem(deps.db, (tx) => repo.userWithMemberships(tx, ctx.userId)),
  );
  const workspace = all.find((w) => w.id === ctx.workspaceId);
  if (!workspace) throw new AppError('unauthenticated', 401, 'Account no longer exists');
  return {
    user: { id: workspace.userId, email: workspace.email, name: workspace.userName },
    workspace: {
      id: workspace.id,
      name: workspace.name,
      tier: workspace.tier,
      organizationId: workspace.organizationId,
      timeZone: workspace.timeZone,
    },
    role: ctx.role,
    isProvider: ctx.isProvider,
    workspaces: all.map((w) => ({ id: w.id, name: w.name, tier: w.tier, role: w.role })),
  };
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Members of the caller's workspace; e-mail addresses only for admins (null for members). */
export async function listMembers(deps: AppDeps, ctx: RequestContext) {
  const [rows, invited] = await withTenant(deps.db, ctx, async (tx) => [
    await repo.workspaceMembersWithActivity(tx, ctx.workspaceId),
    await repo.pendingInvitations(tx, ctx.workspaceId),
  ]);
  const admin = ctx.role === 'admin';
  const members = rows.map((m) => ({
    userId: m.userId,
    name: m.name,
    email: admin ? m.email : null,
    role: m.role,
    isProvider: m.isProvider,
    status: 'active' as 'active' | 'invited',
    lastSignInAt: iso(m.lastSignInAt),
  }));
  // One row per person: members first, then an invitee once even if two invitations raced.
  const seen = new Set(members.map((m) => m.userId));
  const pending = invited
    .filter((i) => {
      if (seen.has(i.userId)) return false;
      seen.add(i.userId);
      return true;
    })
    .map((i) => ({
      userId: i.userId,
      name: i.name,
      email: admin ? i.email : null,
      role: i.role,
      isProvider: i.isProvider,
      status: 'invited' as const,
      lastSignInAt: null,
    }));
  return [...members, ...pending];
}

const lastAdmin = () =>
  new AppError('last_admin', 409, 'The workspace must keep at least one admin; make someone else admin first');

/**
 * Applies a membership change (role, provider flag) or removal and drops every cached credential
 * (role and membership are part of each): answers once the NOTIFY came back, so the change applies
 * on every instance's next request and open streams re-check their credential.
 */
async function changeMembership(
  deps: AppDeps,
  ctx: RequestContext,
  userId: string,
  change: (tx: Tx, admins: string[]) => Promise<void>,
  changeInvitation: (tx: Tx) => Promise<number>,
): Promise<void> {
  let delivered: Promise<void> | undefined;
  await withTenant(deps.db, ctx, async (tx) => {
    const admins = await repo.lockAdmins(tx, ctx.workspaceId);
    // The caller authenticated as admin; a concurrent demotion committed since then wins.
    if (!admins.includes(ctx.userId)) throw new AppError('forbidden', 403, 'Only workspace admins may do this');
    if (!(await repo.findMembership(tx, ctx.workspaceId, userId))) {
      // Not a member (yet): perhaps invited; no credential depends on an invitation.
      if ((await changeInvitation(tx)) === 0) throw notFound('Member');
      return;
    }
    await change(tx, admins);
    await invalidateCredential(tx, deps.principals, '*');
    delivered = deps.principals.echo('*');
  });
  await delivered;
}

export async function updateMember(
  deps: AppDeps,
  ctx: RequestContext,
  userId: string,
  patch: { role?: 'admin' | 'member'; isProvider?: boolean },
) {
  await changeMembership(
    deps,
    ctx,
    userId,
    async (tx, admins) => {
      if (patch.role === 'member' && admins.length === 1 && admins[0] === userId) throw lastAdmin();
      await repo.updateMembership(tx, ctx.workspaceId, userId, patch);
      await writeAudit(tx, ctx, 'admin_action', { action: 'members.update', target: userId, ...patch });
    },
    async (tx) => {
      const n = await repo.updatePendingInvitations(tx, ctx.workspaceId, userId, patch);
      if (n > 0) await writeAudit(tx, ctx, 'admin_action', { action: 'members.update', target: userId, ...patch });
      return n;
    },
  );
  const member = (await listMembers(deps, ctx)).find((m) => m.userId === userId);
  if (!member) throw notFound('Member');
  return member;
}

/** A membership being ended, as the hooks registered with `onMemberRemoved` see it. */
export interface MemberRemoval {
  workspaceId: string;
  userId: string;
  /** The admin removing them (audit rows written by a hook name them). */
  actor: RequestContext;
}

/**
 * What another module does when a member is removed, in the removal's transaction (so nothing of
 * theirs keeps working after the commit; throwing refuses the removal). It may return work to run
 * after the commit (e.g. revoking tokens at a provider), which is best effort.
 */
export type MemberRemovedHook = (
  deps: AppDeps,
  tx: Tx,
  removal: MemberRemoval,
) => Promise<(() => Promise<void>) | undefined>;

const memberRemovedHooks = new Set<MemberRemovedHook>();

/** Registered by a module in its `init` (identity imports no module): e.g. calendar disconnects the member's accounts. */
export function onMemberRemoved(hook: MemberRemovedHook): void {
  memberRemovedHooks.add(hook);
}

/**
 * Ends a membership: the user's tokens and sessions in this workspace stop working at once, and so
 * does what other modules hold for them (`onMemberRemoved`, same transaction).
 */
/**
 * `sessionId`: the browser session asking. When it removes its own user (leaving the workspace), that session is kept
 * out of the revocation and moved on afterwards to another workspace of the user's, as a switch would; it ends only
 * when none is left (an API token is bound to this workspace and goes with the others).
 */
export async function removeMember(
  deps: AppDeps,
  ctx: RequestContext,
  userId: string,
  sessionId?: string,
): Promise<void> {
  const leaving = userId === ctx.userId ? sessionId : undefined;
  const afterCommit: (() => Promise<void>)[] = [];
  await changeMembership(
    deps,
    ctx,
    userId,
    async (tx, admins) => {
      if (admins.length === 1 && admins[0] === userId) throw lastAdmin();
      await repo.deleteMembership(tx, ctx.workspaceId, userId);
      // A welcome link still pending (an operator-added account without a password) would let them back in.
      await repo.deletePendingInvitations(tx, ctx.workspaceId, userId);
      const tokens = await repo.deleteUserTokensIn(tx, ctx.workspaceId, userId);
      const sessions = await repo.revokeUserSessionsIn(tx, ctx.workspaceId, userId, leaving);
      for (const hash of [...tokens, ...sessions]) await invalidateCredential(tx, deps.principals, hash);
      for (const hook of memberRemovedHooks) {
        const after = await hook(deps, tx, { workspaceId: ctx.workspaceId, userId, actor: ctx });
        if (after) afterCommit.push(after);
      }
      await writeAudit(tx, ctx, 'admin_action', {
        action: 'members.remove',
        target: userId,
        tokensRevoked: tokens.length,
        sessionsRevoked: sessions.length,
      });
    },
    async (tx) => {
      const n = (await repo.deletePendingInvitations(tx, ctx.workspaceId, userId)).length;
      if (n > 0) await writeAudit(tx, ctx, 'admin_action', { action: 'members.remove', target: userId, invited: true });
      return n;
    },
  );
  if (leaving) {
    await moveOnAfterLeaving(deps, ctx.userId, leaving).catch((err) =>
      ctx.log.warn({ err }, 'moving the session on after leaving a workspace failed'),
    );
  }
  for (const after of afterCommit) {
    await after().catch((err) => ctx.log.warn({ err, userId }, 'work after a member removal failed'));
  }
}

/**
 * After a user left a workspace from a browser session: the session moves to the workspace of theirs they signed in
 * to last, or ends when they belong to none. Until then it opens nothing (a session needs its membership), so a
 * failure here leaves no way into the workspace left behind. System scope: the session changes workspace.
 */
async function moveOnAfterLeaving(deps: AppDeps, userId: string, sessionId: string): Promise<void> {
  await withSystem(deps.db, async (tx) => {
    const [next] = (await repo.membershipsOfUser(tx, userId)).sort(
      (a, b) => (b.lastSignInAt?.getTime() ?? 0) - (a.lastSignInAt?.getTime() ?? 0),
    );
    const hash = next ? await repo.moveSession(tx, sessionId, next.id) : await repo.revokeSession(tx, sessionId);
    if (hash) await invalidateCredential(tx, deps.principals, hash);
  });
}

/**
 * Whether the user is a member of the workspace, holding that membership row (FOR SHARE) until the
 * caller's transaction ends, so a removal at the same time waits for it (platform/oauth's check before
 * it stores a connection).
 */
export async function holdMembership(tx: Tx, workspaceId: string, userId: string): Promise<boolean> {
  const rows = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)))
    .for('share');
  return rows.length > 0;
}

/** Every API token of the workspace with its owner, never the secret or its hash. */
export async function listWorkspaceTokens(deps: AppDeps, ctx: RequestContext) {
  const rows = await withTenant(deps.db, ctx, (tx) => repo.workspaceTokens(tx, ctx.workspaceId));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    createdAt: r.createdAt.toISOString(),
    lastUsedAt: r.lastUsedAt ? r.lastUsedAt.toISOString() : null,
    userId: r.userId,
    userName: r.userName,
  }));
}

export async function revokeWorkspaceToken(deps: AppDeps, ctx: RequestContext, id: string): Promise<void> {
  let delivered: Promise<void> | undefined;
  const hash = await withTenant(deps.db, ctx, async (tx) => {
    const deleted = await repo.deleteWorkspaceToken(tx, ctx.workspaceId, id);
    if (deleted) {
      await invalidateCredential(tx, deps.principals, deleted);
      await writeAudit(tx, ctx, 'admin_action', { action: 'tokens.revoke', target: id });
      delivered = deps.principals.echo(deleted);
    }
    return deleted;
  });
  await delivered;
  if (!hash) throw notFound('Token');
}

async function issueApiToken(tx: Tx, workspaceId: string, userId: string, name: string) {
  const token = randomToken('atr');
  const row = await repo.insertApiToken(tx, {
    workspaceId,
    id: newId('tok'),
    userId,
    name,
    tokenHash: sha256Hex(token),
  });
  return { id: row.id, name: row.name, token, createdAt: row.createdAt.toISOString() };
}

export async function createApiToken(deps: AppDeps, ctx: RequestContext, name: string) {
  return withTenant(deps.db, ctx, (tx) => issueApiToken(tx, ctx.workspaceId, ctx.userId, name));
}

export async function listApiTokens(deps: AppDeps, ctx: RequestContext) {
  const rows = await withTenant(deps.db, ctx, (tx) => repo.listApiTokens(tx, ctx.workspaceId, ctx.userId));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    createdAt: r.createdAt.toISOString(),
    lastUsedAt: r.lastUsedAt ? r.lastUsedAt.toISOString() : null,
  }));
}

export async function deleteApiToken(deps: AppDeps, ctx: RequestContext, id: string): Promise<void> {
  const deleted = await withTenant(deps.db, ctx, async (tx) => {
    const hash = await repo.deleteApiToken(tx, ctx.workspaceId, ctx.userId, id);
    if (hash) await invalidateCredential(tx, deps.principals, hash);
    return hash;
  });
  if (!deleted) throw notFound('Token');
}

// ---- Operator API: platform staff, across tenants ----

export async function createOrganization(deps: AppDeps, name: string) {
  const org = await withSystem(deps.db, (tx) => repo.insertOrganization(tx, { id: newId('org'), name }));
  return { id: org.id, name: org.name };
}

/**
 * For trusted callers only (the demo seed, never a request): a hash made earlier, set instead of
 * checking and hashing a password here. The demo's one published password is hashed once rather
 * than for every account, and the strength checker's dictionaries stay unloaded at a first start.
 */
export interface TrustedPassword {
  passwordHash?: string;
}

/**
 * How the operator's calls tell the person they added (the routes ask for it; the demo seed does not): an account
 * without a password gets the welcome e-mail (an invitation link to choose it, which signs them in), an account that
 * already had a password and joins a workspace gets "You were added to …". A new account given a password by the
 * operator gets nothing: whoever chose the password hands it over. Changing an existing membership mails no one.
 */
export interface OperatorNotice {
  notify?: boolean;
}

/**
 * Checks a password against the policy (422 `weak_password`) and hashes it. scrypt is deliberately
 * slow: hash before opening the transaction, not while holding it.
 */
async function hashIfGiven(
  password: string | undefined,
  account: { email: string; name: string },
  trusted: TrustedPassword = {},
) {
  if (trusted.passwordHash) return trusted.passwordHash;
  if (password === undefined) return null;
  await strongPassword(password, account);
  return hashPassword(password);
}

/** Adds a member (creating the user when the e-mail is new) and issues them an API token. */

async function addMemberIn(tx: Tx, workspaceId: string, input: MemberInput, passwordHash: string | null) {
  // Creates the user unless the e-mail is taken, also by a request adding the same new address at this
  // moment: that one's insert is waited for and its user taken as existing, as a later call would (was a
  // 500 on the unique e-mail).
  const id = newId('usr');
  const user = await repo.ensureUser(tx, { id, email: input.email, name: input.name, passwordHash });
  const created = user.id === id;
  const hadPassword = !created && user.passwordHash !== null;
  if (!created && passwordHash && !user.passwordHash) {
    await repo.setUserPassword(tx, user.id, passwordHash);
  }
  const joined = !(await repo.findMembership(tx, workspaceId, user.id));
  await repo.upsertMembership(tx, {
    workspaceId,
    userId: user.id,
    role: input.role,
    isProvider: input.isProvider ?? false,
  });
  const token = await issueApiToken(tx, workspaceId, user.id, OPERATOR_TOKEN_NAME);
  await writeAudit(tx, { workspaceId }, 'admin_action', {
    action: 'members.add',
    target: user.id,
    role: input.role,
    by: 'operator',
  });
  return {
    member: { userId: user.id, token: token.token },
    created,
    joined,
    hadPassword,
    hasPassword: hadPassword || passwordHash !== null,
    user: { id: user.id, email: user.email, name: user.name },
  };
}

/**
 * Tells the person an operator call added what happened (see `OperatorNotice`), in its transaction: the welcome
 * e-mail is an invitation to the workspace (the members' invitation mechanism: one-time link, 7 days, the accept page
 * sets the password and signs in; accepting keeps the membership as it is by then).
 */
async function noticeOperatorAddition(
  tx: Tx,
  deps: AppDeps,
  workspace: { id: string; name: string },
  added: Awaited<ReturnType<typeof addMemberIn>>,
  membership: { role: 'admin' | 'member'; isProvider: boolean },
  how: 'created' | 'added',
): Promise<void> {
  if (!added.joined) return;
  const { user } = added;
  if (!added.hasPassword) {
    await issueInvitation(tx, deps, {
      workspaceId: workspace.id,
      workspaceName: workspace.name,
      userId: user.id,
      email: user.email,
      name: user.name,
      role: membership.role,
      isProvider: membership.isProvider,
      invitedBy: null,
      from: { operator: how },
    });
    return;
  }
  if (!added.hadPassword) return;
  await enqueueMail(tx, null, {
    to: [user.email],
    subject: `You were added to ${workspace.name} on Atrium`,
    text:
      `Hello ${user.name},\n\nThe Atrium team added you to ${workspace.name} as ` +
      `${roleInWords(membership.role, membership.isProvider)}.\nSign in as usual with ${user.email} and your ` +
      `password at ${deps.selfUrl()}; switch to ${workspace.name} from the workspace menu at the top.\n`,
  });
}

/** The name of the API token the operator's calls hand out with each account they add. */
export const OPERATOR_TOKEN_NAME = 'Issued by operator';

export async function createWorkspace(
  deps: AppDeps,
  input: CreateWorkspaceInput,
  trusted: TrustedPassword = {},
  notice: OperatorNotice = {},
) {
  const passwordHash = await hashIfGiven(input.admin.password, input.admin, trusted);
  return withSystem(deps.db, async (tx) => {
    if (input.organizationId && !(await repo.findOrganization(tx, input.organizationId))) {
      throw new AppError('unprocessable', 422, 'Unknown organization', {
        errors: [{ path: 'body.organizationId', message: 'No such organization' }],
      });
    }
    const workspace = await repo.insertWorkspace(tx, {
      id: newId('ws'),
      name: input.name,
      tier: input.tier,
      organizationId: input.organizationId ?? null,
      timeZone: input.timeZone ? canonicalTimeZone(input.timeZone) : null,
    });
    const added = await addMemberIn(
      tx,
      workspace.id,
      { ...input.admin, role: 'admin', isProvider: false },
      passwordHash,
    );
    const { member: admin, created } = added;
    // An existing user's workspace list (GET /me, cached beside their credentials) just grew.
    if (!created) await invalidateCredential(tx, deps.principals, '*');
    if (notice.notify) {
      await noticeOperatorAddition(tx, deps, workspace, added, { role: 'admin', isProvider: false }, 'created');
    }
    return { workspace: present(workspace), admin };
  });
}

/**
 * PATCH /workspace: a workspace admin renames their own workspace (the tier stays the operator's). `typedFor`: the workspace whose settings page the name was typed on. A browser session is moved between
 * workspaces by a switch in any tab, so a page still showing the old one must not rename the new one.
 */
export async function updateWorkspaceSettings(
  deps: AppDeps,
  ctx: RequestContext,
  settings: { name?: string; timeZone?: string | null },
  typedFor?: string,
) {
  if (typedFor !== undefined && typedFor !== ctx.workspaceId) {
    // The same answer as a request naming its workspace in X-Atrium-Workspace (platform/auth/workspace-guard.ts).
    throw workspaceChanged(ctx.via, await currentWorkspace(deps, ctx.workspaceId));
  }
  return patchWorkspace(deps, ctx.workspaceId, settings, ctx);
}

export async function patchWorkspace(
  deps: AppDeps,
  id: string,
  input: { tier?: repo.WorkspaceRow['tier']; name?: string; timeZone?: string | null },
  admin?: RequestContext,
) {
  const patch = { ...input, ...(input.timeZone ? { timeZone: canonicalTimeZone(input.timeZone) } : {}) };
  let delivered: Promise<void> | undefined;
  const row = await withSystem(deps.db, async (tx) => {
    const updated = await repo.updateWorkspace(tx, id, patch);
    if (updated) {
      await writeAudit(tx, admin ?? { workspaceId: id }, 'admin_action', {
        action: 'workspace.update',
        target: id,
        by: admin ? 'admin' : 'operator',
        ...patch,
      });
      // Tier, name and zone are part of every cached credential of the workspace (and of /me).
      await invalidateCredential(tx, deps.principals, '*');
      delivered = deps.principals.echo('*');
    }
    return updated;
  });
  // Answer once the NOTIFY came back here: PostgreSQL hands it to every instance's listener at once,
  // so the next request anywhere sees the new tier (not a 30 s cache lifetime later).
  await delivered;
  if (!row) throw notFound('Workspace');
  return present(row);
}

export async function addMember(
  deps: AppDeps,
  workspaceId: string,
  input: MemberInput,
  trusted: TrustedPassword = {},
  notice: OperatorNotice = {},
) {
  const passwordHash = await hashIfGiven(input.password, input, trusted);
  let delivered: Promise<void> | undefined;
  const added = await withSystem(deps.db, async (tx) => {
    const workspace = await repo.findWorkspace(tx, workspaceId);
    if (!workspace) throw notFound('Workspace');
    const added = await addMemberIn(tx, workspaceId, input, passwordHash);
    if (notice.notify) {
      await noticeOperatorAddition(
        tx,
        deps,
        workspace,
        added,
        { role: input.role, isProvider: input.isProvider ?? false },
        'added',
      );
    }
    const { member } = added;
    // An existing member's role or provider flag may have changed.
    await invalidateCredential(tx, deps.principals, '*');
    delivered = deps.principals.echo('*');
    return member;
  });
  await delivered;
  return added;
}

/** E-mail addresses of a workspace's admins, read in the caller's transaction (alerts, break-glass). */
export async function adminEmails(tx: Tx, workspaceId: string): Promise<string[]> {
  const members = await repo.workspaceMembers(tx, workspaceId);
  return members.filter((m) => m.role === 'admin').map((m) => m.email);
}

/**
 * When each of these users' current membership of the workspace began (members only). A member who was
 * removed and added again starts anew: what happened in between was not theirs to see.
 */
export async function membershipStarts(tx: Tx, workspaceId: string, userIds: string[]): Promise<Map<string, Date>> {
  if (userIds.length === 0) return new Map();
  const rows = await tx
    .select({ userId: memberships.userId, createdAt: memberships.createdAt })
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), inArray(memberships.userId, userIds)));
  return new Map(rows.map((r) => [r.userId, r.createdAt]));
}

/** Whether a user is a member of the workspace (and a provider when asked). */
export async function isMember(tx: Tx, workspaceId: string, userId: string, provider = false): Promise<boolean> {
  const members = await repo.workspaceMembers(tx, workspaceId);
  return members.some((m) => m.userId === userId && (!provider || m.isProvider));
}

// ---- Invitations, password reset and change (contract §2a) ----

const INVITATION_TTL_MS = 7 * 24 * 60 * 60_000;
const RESET_TTL_MS = 60 * 60_000;
/** Password-reset requests: at most this many per e-mail address and per client address per window. */
const RESET_EMAIL_LIMIT = 5;
const RESET_CLIENT_LIMIT = 30;
export const RESET_WINDOW_MS = 60 * 60_000;

export interface InvitationInput {
  email: string;
  name: string;
  role: 'admin' | 'member';
  isProvider?: boolean;
}

/** "an admin", "a member (provider)": the role as the invitation and welcome e-mails say it. */
const roleInWords = (role: 'admin' | 'member', isProvider: boolean) =>
  `${role === 'admin' ? 'an admin' : 'a member'}${isProvider ? ' (provider)' : ''}`;

/**
 * Who the invitation comes from, as its e-mail says it: a workspace admin (`inviter`: their name, when known), or the
 * Atrium team through the operator API, which set up the workspace for its first admin (`created`) or added someone to
 * one (`added`): the welcome e-mail of an account that has no password yet.
 */
type InvitationSender = { admin: string | undefined } | { operator: 'created' | 'added' };

/**
 * Issues a one-time invitation link in the caller's system transaction: the user's earlier pending invitations to the
 * workspace stop working (answered as `replacedEarlier` when one was still in its 7 days) and the e-mail is queued.
 * The one mechanism behind `POST /members/invitations`, resending it, and the operator's welcome e-mail.
 */
async function issueInvitation(
  tx: Tx,
  deps: AppDeps,
  invite: {
    workspaceId: string;
    workspaceName: string;
    userId: string;
    email: string;
    name: string;
    role: 'admin' | 'member';
    isProvider: boolean;
    invitedBy: string | null;
    from: InvitationSender;
  },
): Promise<{ replacedEarlier: boolean }> {
  const token = randomToken('inv');
  const earlier = await repo.deletePendingInvitations(tx, invite.workspaceId, invite.userId);
  const replacedEarlier = earlier.some((invitation) => invitation.expiresAt.getTime() > Date.now());
  const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
  await repo.insertInvitation(tx, {
    workspaceId: invite.workspaceId,
    id: newId('inv'),
    userId: invite.userId,
    email: invite.email,
    name: invite.name,
    role: invite.role,
    isProvider: invite.isProvider,
    tokenHash: sha256Hex(token),
    invitedBy: invite.invitedBy,
    expiresAt,
  });
  const link = `${deps.selfUrl()}/accept-invitation?token=${encodeURIComponent(token)}`;
  const place = invite.workspaceName;
  const as = roleInWords(invite.role, invite.isProvider);
  let subject: string;
  let text: string;
  if ('admin' in invite.from) {
    // Who invited them, so the invitee can tell a colleague's invitation from a stranger's.
    const inviter = invite.from.admin;
    subject = inviter ? `${inviter} invited you to ${place} on Atrium` : `You are invited to ${place} on Atrium`;
    text =
      `Hello ${invite.name},\n\n${inviter ? `${inviter} invited you` : 'You have been invited'} to join ${place} on ` +
      `Atrium as ${as}.\nAccept the invitation (the link works once, for 7 days):\n\n${link}\n`;
  } else {
    // The operator's call made the account: no colleague to name; the Atrium team set it up.
    subject = `Welcome to ${place} on Atrium`;
    text =
      `Hello ${invite.name},\n\n` +
      (invite.from.operator === 'created'
        ? `The Atrium team set up the workspace ${place} for you, with you as its admin.`
        : `The Atrium team added you to ${place} on Atrium as ${as}.`) +
      `\nTo sign in, choose your password here (the link works once, for 7 days; it signs you in):\n\n${link}\n\n` +
      `You sign in with this e-mail address, ${invite.email}. If the link has expired, open ${deps.selfUrl()} and ` +
      'use “Forgot password?” with this address to choose your password.\n';
  }
  // An admin's invitation that cannot be delivered is reported in the workspace's inbox, for the admins; the Atrium
  // team's welcome is a platform mail (no workspace): a new workspace's inbox has no one yet who could read it.
  await enqueueMail(tx, 'admin' in invite.from ? invite.workspaceId : null, {
    to: [invite.email],
    subject,
    text,
    notAfter: expiresAt.toISOString(),
  });
  return { replacedEarlier };
}

/**
 * Invites someone by e-mail: creates the user when the address is new (no password yet) and a
 * pending invitation; the membership is created when the one-time link is accepted. Re-inviting
 * replaces the earlier link. System scope: the app role may not create users.
 */
export async function inviteMember(deps: AppDeps, ctx: RequestContext, input: InvitationInput) {
  return withSystem(deps.db, async (tx) => {
    await repo.lockInvitationsOf(tx, ctx.workspaceId, input.email);
    const workspace = await repo.findWorkspace(tx, ctx.workspaceId);
    let user = await repo.findUserByEmail(tx, input.email);
    if (user && (await repo.findMembership(tx, ctx.workspaceId, user.id))) {
      throw new AppError('already_member', 409, 'This person is already a member of the workspace');
    }
    user ??= await repo.ensureUser(tx, { id: newId('usr'), email: input.email, name: input.name, passwordHash: null });
    const userId = user.id;
    // An earlier link still in its 7 days stops working now: the answer says so, for the admin to tell the invitee.
    const { replacedEarlier } = await issueInvitation(tx, deps, {
      workspaceId: ctx.workspaceId,
      workspaceName: workspace?.name ?? 'a workspace',
      userId,
      email: input.email,
      name: input.name,
      role: input.role,
      isProvider: input.isProvider ?? false,
      invitedBy: ctx.userId,
      from: { admin: ctx.userId ? (await userNames(tx, [ctx.userId])).get(ctx.userId) : undefined },
    });
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'members.invite',
      target: userId,
      role: input.role,
      isProvider: input.isProvider ?? false,
    });
    return { userId, status: 'invited' as const, replacedEarlier };
  });
}

/** Resending an invitation: at most this many per invitee, and per workspace, per hour. */
export const RESEND_INVITEE_LIMIT = 3;
export const RESEND_WORKSPACE_LIMIT = 30;
const RESEND_WINDOW_MS = 60 * 60_000;

/**
 * Sends a pending invitation again (the admin's *Resend*): a new link, valid 7 days from now, mailed to the same
 * address with the same role; the earlier link stops working at once (as inviting again does), so only the latest
 * e-mail's link is ever valid. An expired invitation may be resent too. Audited as the invitation was
 * (`members.invite`, with `resent: true`). 404 when the workspace has no pending invitation for that user (another
 * workspace's included); 409 `already_member` when they joined meanwhile; 429 past the limits above.
 */
export async function resendInvitation(deps: AppDeps, ctx: RequestContext, userId: string) {
  const pending = await withTenant(deps.db, ctx, (tx) => repo.pendingInvitationOf(tx, ctx.workspaceId, userId));
  if (!pending) throw notFound('Invitation');
  const [byInvitee, byWorkspace] = await Promise.all([
    incrementCount(deps.db, `invite-resend:${ctx.workspaceId}:${userId}`, RESEND_WINDOW_MS),
    incrementCount(deps.db, `invite-resend:${ctx.workspaceId}`, RESEND_WINDOW_MS),
  ]);
  const waits = [
    byInvitee.count > RESEND_INVITEE_LIMIT ? byInvitee.resetInMs : null,
    byWorkspace.count > RESEND_WORKSPACE_LIMIT ? byWorkspace.resetInMs : null,
  ].filter((w) => w !== null);
  if (waits.length > 0) {
    await Promise.all([
      decrementCount(deps.db, `invite-resend:${ctx.workspaceId}:${userId}`),
      decrementCount(deps.db, `invite-resend:${ctx.workspaceId}`),
    ]);
    throw new AppError(
      'rate_limited',
      429,
      byInvitee.count > RESEND_INVITEE_LIMIT
        ? `This invitation was sent ${RESEND_INVITEE_LIMIT} times in the last hour; try again later`
        : `This workspace sent ${RESEND_WORKSPACE_LIMIT} invitations again in the last hour; try again later`,
      {},
      { 'retry-after': String(Math.max(1, Math.ceil(Math.max(...waits) / 1000))) },
    );
  }
  const resent = withSystem(deps.db, async (tx) => {
    await repo.lockInvitationsOf(tx, ctx.workspaceId, pending.email);
    // Read again, locked: a cancel (which takes no lock of ours) or an acceptance committing meanwhile is waited
    // for and seen, so neither a cancelled invitation comes back nor a new member gets a fresh one.
    const current = await repo.pendingInvitationOf(tx, ctx.workspaceId, userId, { lock: true });
    if (await repo.findMembership(tx, ctx.workspaceId, userId)) {
      throw new AppError('already_member', 409, 'This person is already a member of the workspace');
    }
    if (!current) throw notFound('Invitation');
    const workspace = await repo.findWorkspace(tx, ctx.workspaceId);
    const { replacedEarlier } = await issueInvitation(tx, deps, {
      workspaceId: ctx.workspaceId,
      workspaceName: workspace?.name ?? 'a workspace',
      userId,
      email: current.email,
      name: current.name,
      role: current.role,
      isProvider: current.isProvider,
      invitedBy: ctx.userId,
      from: { admin: (await userNames(tx, [ctx.userId])).get(ctx.userId) },
    });
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'members.invite',
      target: userId,
      role: current.role,
      isProvider: current.isProvider,
      resent: true,
    });
    return { userId, status: 'invited' as const, replacedEarlier };
  });
  // A resend refused (gone, or joined meanwhile) sent nothing: it does not count against the limits.
  return resent.catch(async (error: unknown) => {
    if (error instanceof AppError && (error.code === 'not_found' || error.code === 'already_member')) {
      await Promise.all([
        decrementCount(deps.db, `invite-resend:${ctx.workspaceId}:${userId}`),
        decrementCount(deps.db, `invite-resend:${ctx.workspaceId}`),
      ]);
    }
    throw error;
  });
}

function usableInvitation(row: repo.InvitationRow | undefined): repo.InvitationRow {
  if (!row) throw new AppError('not_found', 404, 'Invitation not found');
  if (row.acceptedAt) throw new AppError('invitation_used', 409, 'This invitation has already been accepted');
  if (row.expiresAt.getTime() <= Date.now()) {
    throw new AppError('invitation_expired', 410, 'This invitation has expired; ask an admin for a new one');
  }
  return row;
}

/**
 * What the invitation page shows before asking for a password: the workspace, the invited address and
 * whether that account already has a password (then accepting asks for it, not for a new one). Answered
 * only to the token's holder, who is the invited address's owner; the same 404/409/410 as accepting.
 */
export async function lookupInvitation(deps: AppDeps, token: string): Promise<InvitationLookup> {
  return withSystem(deps.db, async (tx) => {
    const found = usableInvitation(await repo.findInvitationByHash(tx, sha256Hex(token)));
    const user = await repo.findUser(tx, found.userId);
    const workspace = await repo.findWorkspace(tx, found.workspaceId);
    if (!user || !workspace) throw new AppError('not_found', 404, 'Invitation not found');
    return { workspace: { name: workspace.name }, email: user.email, existingAccount: user.passwordHash !== null };
  });
}

/**
 * Accepts an invitation and signs in (like POST /auth/sign-in). A new account sets its password
 * here (strength checked); an account that already has one must give that password (401 otherwise).
 */
export async function acceptInvitation(deps: AppDeps, input: { token: string; password: string }) {
  const hash = sha256Hex(input.token);
  const found = usableInvitation(await withSystem(deps.db, (tx) => repo.findInvitationByHash(tx, hash)));
  const user = await withSystem(deps.db, (tx) => repo.findUser(tx, found.userId));
  if (!user) throw new AppError('not_found', 404, 'Invitation not found');
  let newHash: string | null = null;
  if (user.passwordHash) {
    if (!(await verifyPassword(input.password, user.passwordHash))) {
      throw new AppError('unauthenticated', 401, 'This account already has a password: enter it to accept');
    }
  } else {
    await strongPassword(input.password, { email: user.email, name: user.name });
    newHash = await hashPassword(input.password);
  }
  const chosen = await withSystem(deps.db, async (tx) => {
    const invitation = usableInvitation(await repo.lockInvitationByHash(tx, hash));
    if (newHash) await repo.setUserPassword(tx, user.id, newHash);
    // A member already (the operator's welcome e-mail, or added meanwhile): the membership stays as it is now
    // (an admin may have changed the role since the link was mailed).
    if (!(await repo.findMembership(tx, invitation.workspaceId, user.id))) {
      await repo.upsertMembership(tx, {
        workspaceId: invitation.workspaceId,
        userId: user.id,
        role: invitation.role,
        isProvider: invitation.isProvider,
      });
    }
    await repo.markInvitationAccepted(tx, invitation.workspaceId, invitation.id);
    await writeAudit(tx, { workspaceId: invitation.workspaceId, userId: user.id }, 'admin_action', {
      action: 'members.accept_invitation',
      target: user.id,
    });
    // The user's workspace list (GET /me) grew.
    await invalidateCredential(tx, deps.principals, '*');
    const memberships = await repo.membershipsOfUser(tx, user.id);
    return memberships.find((m) => m.id === invitation.workspaceId)!;
  });
  return openSession(deps, { ...user, passwordHash: newHash ?? user.passwordHash }, chosen, 'invitation');
}

/**
 * Sends the reset link, in a job: the request does the same work (rate-limit counts and one job
 * insert) whether or not the address belongs to an account, so neither its answer nor its timing
 * tells. The job looks the account up and mails only when there is one.
 */
export const passwordResetJob = defineJob({
  type: 'identity.password-reset',
  schema: z.object({ email: z.string() }),
  maxAttempts: 5,
  async handler(jobCtx, payload) {
    const { deps } = jobCtx;
    await withSystem(deps.db, async (tx) => {
      const user = await repo.findUserByEmail(tx, payload.email);
      if (!user) return;
      const token = randomToken('rst');
      const expiresAt = new Date(Date.now() + RESET_TTL_MS);
      await repo.insertPasswordReset(tx, { id: newId('rst'), userId: user.id, tokenHash: sha256Hex(token), expiresAt });
      const link = `${deps.selfUrl()}/reset-password?token=${encodeURIComponent(token)}`;
      // An account that never had a password (made by an operator call or an invitation not yet accepted) has
      // nothing to reset: it is asked to choose its first one, which ends none of its sessions or API tokens.
      await enqueueMail(
        tx,
        null,
        user.passwordHash === null
          ? {
              to: [user.email],
              subject: 'Choose your Atrium password',
              text:
                `Hello ${user.name},\n\nYour Atrium account (${user.email}) has no password yet. Choose one here to ` +
                `sign in (the link works once, for 1 hour):\n\n${link}\n\nIf you did not ask for this, ignore this ` +
                'e-mail: nothing changes.\n',
              notAfter: expiresAt.toISOString(),
            }
          : {
              to: [user.email],
              subject: 'Reset your Atrium password',
              text:
                `Hello ${user.name},\n\nSomeone asked to reset the password of this account. If it was you, choose a ` +
                `new password here (the link works once, for 1 hour):\n\n${link}\n\nIf it was not you, ignore this e-mail.\n`,
              notAfter: expiresAt.toISOString(),
            },
      );
    });
  },
});

export async function requestPasswordReset(deps: AppDeps, email: string, address: string): Promise<void> {
  const [byEmail, byClient] = await Promise.all([
    incrementCount(deps.db, `reset:email:${email.toLowerCase()}`, RESET_WINDOW_MS),
    incrementCount(deps.db, `reset:address:${address}`, RESET_WINDOW_MS),
  ]);
  const waits = [
    byEmail.count > RESET_EMAIL_LIMIT ? byEmail.resetInMs : null,
    byClient.count > RESET_CLIENT_LIMIT ? byClient.resetInMs : null,
  ].filter((w) => w !== null);
  if (waits.length > 0) {
    throw new AppError(
      'rate_limited',
      429,
      'Too many password-reset requests; try again later',
      {},
      { 'retry-after': String(Math.max(1, Math.ceil(Math.max(...waits) / 1000))) },
    );
  }
  await withSystem(deps.db, (tx) =>
    enqueueJob(tx, passwordResetJob, { email: email.toLowerCase() }, { workspaceId: null }),
  );
}

/**
 * Production's answer to contract §10's "refuses any demo account with a published password": every
 * demo account (a data dir that began in development) still holding the README's password gets no
 * password (sign-in with it is refused; the owner sets a new one with a reset link) and loses its
 * sessions and API tokens. Answers the e-mails of the accounts locked. Checks only the demo
 * addresses (one password check per distinct hash), so it costs nothing on a real deployment.
 */
export async function lockPublishedPasswords(deps: AppDeps): Promise<string[]> {
  const found = await withSystem(deps.db, async (tx) =>
    (await Promise.all(DEMO_USERS.map((u) => repo.findUserByEmail(tx, u.email)))).filter(
      (u): u is repo.UserRow => !!u?.passwordHash,
    ),
  );
  const published = new Map<string, boolean>();
  const locked: repo.UserRow[] = [];
  for (const user of found) {
    const hash = user.passwordHash as string;
    if (!published.has(hash)) published.set(hash, await verifyPassword(DEMO_PASSWORD, hash));
    if (published.get(hash)) locked.push(user);
  }
  if (locked.length === 0) return [];
  await withSystem(deps.db, async (tx) => {
    for (const user of locked) {
      await repo.clearUserPassword(tx, user.id);
      await revokeEverything(tx, deps, user.id);
    }
  });
  return locked.map((u) => u.email);
}

/** Revokes every session (all workspaces, optionally but one) and every API token of a user, at once. */
async function revokeEverything(tx: Tx, deps: AppDeps, userId: string, keepSessionId?: string) {
  const sessions = await repo.revokeAllUserSessions(tx, userId, keepSessionId);
  const tokens = keepSessionId ? [] : await repo.deleteAllUserTokens(tx, userId);
  for (const hash of [...sessions, ...tokens]) await invalidateCredential(tx, deps.principals, hash);
}

const checkReset = (row: { usedAt: Date | null; expiresAt: Date } | undefined) => {
  if (!row) throw new AppError('not_found', 404, 'Reset link not found');
  if (row.usedAt) throw new AppError('reset_used', 409, 'This reset link has already been used');
  if (row.expiresAt.getTime() <= Date.now()) throw new AppError('reset_expired', 410, 'This reset link has expired');
};

/**
 * What the reset page shows before asking for a password: the account's e-mail (for password managers) and whether it
 * has a password yet (`firstPassword`: it never had one, so the page says "choose", not "reset", and nothing is signed
 * out). Answered only to the token's holder, the address's owner; the same 404/409/410 as confirming.
 */
export async function lookupPasswordReset(deps: AppDeps, token: string) {
  return withSystem(deps.db, async (tx) => {
    const row = await repo.findPasswordResetByHash(tx, sha256Hex(token));
    checkReset(row);
    const user = await repo.findUser(tx, row!.userId);
    if (!user) throw new AppError('not_found', 404, 'Reset link not found');
    return { email: user.email, firstPassword: user.passwordHash === null };
  });
}

/**
 * Sets a new password from a reset link; every session and API token of the user is revoked. Not when the account had
 * no password (its first one, chosen from the link a "Forgot password?" mails such an account): there was no password
 * that could have leaked, and the API token an operator call handed out with the account keeps working.
 */
export async function confirmPasswordReset(deps: AppDeps, input: { token: string; password: string }) {
  const hash = sha256Hex(input.token);
  const check = checkReset;
  const found = await withSystem(deps.db, async (tx) => {
    const row = await repo.lockPasswordResetByHash(tx, hash);
    check(row);
    return { reset: row!, user: await repo.findUser(tx, row!.userId) };
  });
  if (!found.user) throw new AppError('not_found', 404, 'Reset link not found');
  await strongPassword(input.password, { email: found.user.email, name: found.user.name });
  const passwordHash = await hashPassword(input.password);
  await withSystem(deps.db, async (tx) => {
    check(await repo.lockPasswordResetByHash(tx, hash));
    await repo.setUserPassword(tx, found.user!.id, passwordHash);
    await repo.usePasswordResets(tx, found.user!.id);
    // Contract §2a: every session and token of the user is revoked, a first password's included (an account whose
    // published password was cleared has none either, and its old tokens must not outlive the change).
    await revokeEverything(tx, deps, found.user!.id);
  });
  // The reset proved the mailbox: failures others ran up against the account no longer hold its owner back.
  await resetCount(deps.db, `signin:account:${found.user.email.toLowerCase()}`);
}

/**
 * Changes the caller's password. A wrong current password answers 422 `wrong_password` (not 401:
 * the caller is authenticated, and clients treat 401 as "signed out"). The caller's other
 * sessions end; this session and API tokens stay.
 */
export async function changePassword(
  deps: AppDeps,
  ctx: RequestContext,
  sessionId: string | undefined,
  input: { currentPassword: string; newPassword: string },
) {
  const user = await withSystem(deps.db, (tx) => repo.findUser(tx, ctx.userId));
  if (!user || !(await verifyPassword(input.currentPassword, user.passwordHash))) {
    throw new AppError('wrong_password', 422, 'The current password is wrong', {
      errors: [{ path: 'body.currentPassword', message: 'Wrong password' }],
    });
  }
  await strongPassword(input.newPassword, { email: user.email, name: user.name });
  const passwordHash = await hashPassword(input.newPassword);
  await withSystem(deps.db, async (tx) => {
    await repo.setUserPassword(tx, user.id, passwordHash);
    await repo.usePasswordResets(tx, user.id);
    await revokeEverything(tx, deps, user.id, sessionId ?? '-');
  });
}

/**
 * The workspaces of the caller's organization where the caller is a member (their own role and tier
 * in each): what an organization-wide view may read, and nothing else.
 */
export async function organizationWorkspacesOf(deps: AppDeps, ctx: Pick<RequestContext, 'userId' | 'organizationId'>) {
  if (!ctx.organizationId) return [];
  const all = await withSystem(deps.db, (tx) => repo.membershipsOfUser(tx, ctx.userId));
  return all
    .filter((m) => m.organizationId === ctx.organizationId)
    .map((m) => ({ workspaceId: m.id, name: m.name, tier: m.tier, role: m.role, isProvider: m.isProvider }));
}

/** Whether a workspace with this id exists (inbound mail finds its workspace from the address). */
export async function workspaceExists(deps: AppDeps, workspaceId: string): Promise<boolean> {
  if (!/^ws_[0-9a-z]{10,40}$/.test(workspaceId)) return false;
  return Boolean(await withSystem(deps.db, (tx) => repo.findWorkspace(tx, workspaceId)));
}
