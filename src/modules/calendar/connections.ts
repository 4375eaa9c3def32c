// Connections (platform/oauth underneath) and the calendars they reach. Each member connects their
// own accounts; admins see and manage all of the workspace's. Free: one connection per workspace.
import { and, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { lockUntilCommit, withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  type CompletedAuthorization,
  type Connection,
  completeAuthorization,
  countConnections,
  disconnectIn,
  getAccessToken,
  holdConnection,
  listConnections,
  startAuthorization,
  type TokenUser,
} from '../../platform/oauth/index.js';
import { hasFeature, requireFeature } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import { type MemberRemovedHook, workspaceTier } from '../identity/index.js';
import { oauthDeps, resolveProvider } from './providers/index.js';
import type { ProviderCalendar, ProviderSession } from './providers/types.js';
import type { CalendarInfo } from './schema.js';
import { calendarCalendars } from './tables.js';

/** The providers whose connections count against Free's one. */
const CALENDAR_PROVIDERS = ['google', 'microsoft'];

/** A provider without credentials (and no emulator) is disabled: its features answer `unavailable` (contract §10). */
export const providerUnavailable = (provider: string) =>
  new AppError('unavailable', 503, `${provider} calendars are not configured on this server`, { provider });

export const callbackUrl = (deps: AppDeps, provider: string) =>
  `${deps.selfUrl()}/api/v1/calendar/oauth/${provider}/callback`;

/** 201 {authorizeUrl}: the provider's consent page for this user. */
export async function startConnection(
  deps: AppDeps,
  ctx: RequestContext,
  provider: string,
  options: { loginHint?: string; connectionId?: string } = {},
) {
  if (!resolveProvider(deps, provider)) throw providerUnavailable(provider);
  let loginHint = options.loginHint;
  if (options.connectionId) {
    // Reconnecting: the provider is asked for that connection's account, so the callback repairs it
    // (same connection, same calendars) instead of adding whichever account the browser is signed in to.
    const own = await listConnections(deps, ctx, canSeeAll(ctx) ? {} : { userId: ctx.userId });
    const repairing = own.find((c) => c.id === options.connectionId && c.provider === provider);
    if (!repairing) throw notFound('Connection');
    loginHint = repairing.accountEmail;
  }
  // Reconnecting a connection (Reconnect on it, or one that needs it) is not a second connection; should the
  // person pick another account at the provider, the callback's admission refuses it on Free.
  if (!options.connectionId && !hasFeature(ctx.tier, 'calendar_both_providers')) {
    const existing = await listConnections(deps, ctx);
    if (existing.length > 0 && !existing.some((c) => c.status === 'reauth_required' && c.provider === provider)) {
      requireFeature(ctx, 'calendar_both_providers');
    }
  }
  const { authorizeUrl } = startAuthorization(oauthDeps(deps), ctx, provider, {
    redirectUri: callbackUrl(deps, provider),
    returnTo: '/calendar',
    loginHint,
  });
  return { authorizeUrl };
}

/** The provider's redirect back: tokens stored, calendars fetched (a failure there is not fatal). */
export async function finishConnection(
  deps: AppDeps,
  provider: string,
  query: { code?: string; state?: string; error?: string },
  options: { signedInUserId?: string; requestId?: string; log?: TokenUser['log'] },
): Promise<CompletedAuthorization> {
  if (!resolveProvider(deps, provider)) throw providerUnavailable(provider);
  const done = await completeAuthorization(oauthDeps(deps), provider, query, {
    expectedUserId: options.signedInUserId,
    requestId: options.requestId,
    // Free's one connection, checked again as it is stored: connections started side by side (each
    // allowed when it started) cannot all finish. One workspace's connections are stored one at a time.
    admit: async (tx, connection) => {
      if (connection.repaired) return;
      const { workspaceId } = connection;
      const tier = await workspaceTier(tx, workspaceId);
      if (!tier || hasFeature(tier, 'calendar_both_providers')) return;
      await lockUntilCommit(tx, `calendar.connections:${workspaceId}`);
      if ((await countConnections(tx, workspaceId, CALENDAR_PROVIDERS, connection.connectionId)) > 0) {
        requireFeature({ tier }, 'calendar_both_providers');
      }
    },
  });
  const user: TokenUser = {
    workspaceId: done.workspaceId,
    userId: done.userId,
    requestId: options.requestId,
    log: options.log,
  };
  await syncCalendars(deps, user, {
    id: done.connectionId,
    provider,
    accountEmail: done.accountEmail,
    userId: done.userId,
  }).catch((err) => options.log?.warn({ err, provider }, 'calendars of a new connection could not be fetched yet'));
  return done;
}

export interface ConnectionView {
  id: string;
  provider: string;
  accountEmail: string;
  status: Connection['status'];
  createdAt: string;
  userId: string;
}

const canSeeAll = (ctx: RequestContext) => ctx.role === 'admin' || ctx.via === 'system';

export async function listCalendarConnections(deps: AppDeps, ctx: RequestContext): Promise<ConnectionView[]> {
  const all = await listConnections(deps, ctx, canSeeAll(ctx) ? {} : { userId: ctx.userId });
  return all
    .filter(
      (c) => resolveProvider(deps, c.provider) !== undefined || c.provider === 'google' || c.provider === 'microsoft',
    )
    .map(({ id, provider, accountEmail, status, createdAt, userId }) => ({
      id,
      provider,
      accountEmail,
      status,
      createdAt,
      userId,
    }));
}

/**
 * Tokens destroyed (and revoked at the provider), its calendars disconnected. Your own, or any as
 * admin. The calendars' rows stay (ids, appointments, sessions and rooms keep pointing at them) but
 * leave every list and read as unknown until the same account is connected again.
 */
export async function removeConnection(deps: AppDeps, ctx: RequestContext, connectionId: string): Promise<void> {
  const mine = await listConnections(deps, ctx, canSeeAll(ctx) ? {} : { userId: ctx.userId });
  if (!mine.some((c) => c.id === connectionId)) throw notFound('Connection');
  const done = await withTenant(deps.db, ctx, async (tx) => {
    const disconnected = await disconnectIn(oauthDeps(deps), tx, ctx, { connectionId });
    await disconnectCalendars(tx, ctx.workspaceId, disconnected.connectionIds);
    return disconnected;
  });
  if (done.connectionIds.length === 0) throw notFound('Connection');
  await done.afterCommit();
}

/**
 * Marks the calendars of disconnected connections `disconnected_at`: out of every list, unknown to
 * reads and writes. Not deleted: a calendar's id is stable for (workspace, provider, account, provider
 * calendar), so connecting the account again brings the same rows back with what points at them.
 */
async function disconnectCalendars(tx: Tx, workspaceId: string, connectionIds: string[]): Promise<void> {
  if (connectionIds.length === 0) return;
  await tx
    .update(calendarCalendars)
    .set({ disconnectedAt: new Date() })
    .where(
      and(
        eq(calendarCalendars.workspaceId, workspaceId),
        inArray(calendarCalendars.connectionId, connectionIds),
        isNull(calendarCalendars.disconnectedAt),
      ),
    );
}

/**
 * A member removed from the workspace (identity's `onMemberRemoved`, in the removal's transaction):
 * every calendar account they connected there is disconnected as `DELETE /calendar/connections/:id`
 * does (tokens destroyed now, revoked at the provider after commit), so their calendars leave the
 * workspace's lists at once and no list or write reads their tokens again.
 */
export const disconnectRemovedMember: MemberRemovedHook = async (deps, tx, removal) => {
  const { connectionIds, afterCommit } = await disconnectIn(oauthDeps(deps), tx, removal.actor, {
    userId: removal.userId,
    providers: CALENDAR_PROVIDERS,
  });
  await disconnectCalendars(tx, removal.workspaceId, connectionIds);
  return afterCommit;
};

/**
 * The provider session of one connection for one operation: the token is read once (one
 * `token_access` row with the operation's reason) however many calls the operation makes; a 401
 * gets one forced refresh (its own row, reason `token.refresh`).
 */
export function sessionFor(
  deps: AppDeps,
  user: TokenUser,
  connection: { id: string; provider: string },
  reason: string,
): ProviderSession {
  const provider = resolveProvider(deps, connection.provider);
  if (!provider) throw providerUnavailable(connection.provider);
  const oauth = oauthDeps(deps);
  let token: Promise<string> | undefined;
  let refreshed: Promise<string> | undefined;
  return {
    baseUrl: provider.apiBase,
    timeoutMs: deps.config.calendar.timeoutMs,
    connectionId: connection.id,
    requestId: user.requestId,
    token: () => {
      token ??= getAccessToken(oauth, user, connection.id, reason);
      return token;
    },
    refreshedToken: () => {
      refreshed ??= getAccessToken(oauth, user, connection.id, 'token.refresh', { forceRefresh: true });
      token = refreshed;
      return refreshed;
    },
  };
}

type CalendarRow = typeof calendarCalendars.$inferSelect;

export const presentCalendar = (row: CalendarRow): CalendarInfo => ({
  id: row.id,
  provider: row.provider,
  name: row.name,
  accountEmail: row.accountEmail,
  primary: row.primary,
  connectionId: row.connectionId,
  hostUserId: row.hostUserId,
  color: row.color,
});

/** Fetches the account's calendars and stores new or renamed ones (ids stay stable). */
export async function syncCalendars(
  deps: AppDeps,
  user: TokenUser,
  connection: { id: string; provider: string; accountEmail: string; userId: string },
  session = sessionFor(deps, user, connection, 'calendar.calendars.list'),
): Promise<void> {
  const provider = resolveProvider(deps, connection.provider);
  if (!provider) throw providerUnavailable(connection.provider);
  await storeCalendars(deps, user, connection, await provider.adapter.listCalendars(session));
}

/**
 * Stores what the provider listed. A calendar is known by (workspace, provider, account, provider
 * calendar id): a new one gets an id, a known one (also one left by an earlier connection of the same
 * account, disconnected since) is updated and attached to this connection, so its id, appointments,
 * sessions and rooms carry over. Calendars the provider no longer lists are disconnected, not deleted.
 * Nothing is stored when the connection was disconnected while the provider was being asked.
 */
export async function storeCalendars(
  deps: AppDeps,
  user: TokenUser,
  connection: { id: string; provider: string; accountEmail: string; userId: string },
  remote: ProviderCalendar[],
): Promise<void> {
  await withTenant(deps.db, user, async (tx) => {
    if (!(await holdConnection(tx, user.workspaceId, connection.id))) return;
    for (const cal of remote) {
      await tx
        .insert(calendarCalendars)
        .values({
          workspaceId: user.workspaceId,
          id: newId('cal'),
          connectionId: connection.id,
          provider: connection.provider,
          providerCalendarId: cal.providerCalendarId,
          name: cal.name,
          accountEmail: connection.accountEmail,
          primary: cal.primary,
          color: cal.color,
          hostUserId: connection.userId,
        })
        .onConflictDoUpdate({
          target: [
            calendarCalendars.workspaceId,
            calendarCalendars.provider,
            calendarCalendars.accountEmail,
            calendarCalendars.providerCalendarId,
          ],
          set: {
            connectionId: connection.id,
            name: cal.name,
            primary: cal.primary,
            color: cal.color,
            hostUserId: connection.userId,
            disconnectedAt: null,
          },
        });
    }
    const listed = remote.map((c) => c.providerCalendarId);
    await tx
      .update(calendarCalendars)
      .set({ disconnectedAt: sql`now()` })
      .where(
        and(
          eq(calendarCalendars.workspaceId, user.workspaceId),
          eq(calendarCalendars.connectionId, connection.id),
          isNull(calendarCalendars.disconnectedAt),
          listed.length ? notInArray(calendarCalendars.providerCalendarId, listed) : undefined,
        ),
      );
  });
}

/** The workspace's calendars; active connections are asked for changes first (a failure keeps what we had). */
export async function listCalendars(deps: AppDeps, ctx: RequestContext): Promise<CalendarInfo[]> {
  const connections = await listConnections(deps, ctx);
  await Promise.all(
    connections
      .filter((c) => c.status === 'active' && resolveProvider(deps, c.provider))
      .map((c) =>
        syncCalendars(deps, ctx, c).catch((err) =>
          ctx.log.warn({ err, provider: c.provider, connectionId: c.id }, 'calendar list refresh failed'),
        ),
      ),
  );
  return (await storedCalendars(deps, ctx)).map(presentCalendar);
}

/** The workspace's connected calendars (a disconnected one is as unknown as another workspace's). */
export async function storedCalendars(deps: AppDeps, ctx: { workspaceId: string }): Promise<CalendarRow[]> {
  return withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(calendarCalendars)
      .where(and(eq(calendarCalendars.workspaceId, ctx.workspaceId), isNull(calendarCalendars.disconnectedAt)))
      .orderBy(calendarCalendars.provider, calendarCalendars.accountEmail, calendarCalendars.id),
  );
}
