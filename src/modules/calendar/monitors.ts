// Health probes of the calendar's providers (contract §9): each OAuth token endpoint answers a
// small real request every run, directly (not through the circuit breaker), so a recovery shows at
// the next run. Google and Microsoft: a refresh with a token that cannot be valid must come back as
// a well-formed `invalid_grant`; Zoom (a server-to-server app): a real account_credentials token.
// The nightly deeper run refreshes one real connection's token per provider (a full refresh, §9).
import { performance } from 'node:perf_hooks';
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { withSystem } from '../../platform/db/tenant.js';
import type { DependencyProbe, ProbeResult } from '../../platform/module.js';
import { getAccessToken, OAuthGrantError, oauthConnections } from '../../platform/oauth/index.js';
import type { AppDeps } from '../../platform/types.js';
import { probeFetch } from '../../platform/upstream/index.js';
import { oauthDeps, resolveProvider } from './providers/index.js';
import { calendarAppointments } from './tables.js';

const SLOW_MS = 2_000;

const elapsed = (started: number) => Math.round((performance.now() - started) * 10) / 10;

const timed = (ms: number, output?: string): ProbeResult => ({
  status: ms <= SLOW_MS ? 'pass' : 'warn',
  observedValue: ms,
  observedUnit: 'ms',
  ...(output ? { output } : {}),
});

const disabled = (name: string): ProbeResult => ({
  status: 'warn',
  observedValue: 'disabled',
  observedUnit: 'n/a',
  output: `${name} has no credentials configured (and emulators are off): its features answer unavailable`,
});

/**
 * The nightly deeper check: a real refresh of one live connection's token (the longest-connected),
 * through the same path a calendar call takes (single-flight, stored sealed, a `token_access` row in
 * that workspace, `reauth_required` on `invalid_grant`). Undefined when no connection exists yet.
 */
async function fullRefresh(deps: AppDeps, name: string, label: string): Promise<ProbeResult | undefined> {
  const [connection] = await withSystem(deps.db, (tx) =>
    tx
      .select({ id: oauthConnections.id, workspaceId: oauthConnections.workspaceId })
      .from(oauthConnections)
      .where(and(eq(oauthConnections.provider, name), eq(oauthConnections.status, 'active')))
      .orderBy(asc(oauthConnections.createdAt))
      .limit(1),
  );
  if (!connection) return undefined;
  const started = performance.now();
  try {
    await getAccessToken(oauthDeps(deps), { workspaceId: connection.workspaceId }, connection.id, 'health.refresh', {
      forceRefresh: true,
    });
  } catch (err) {
    return {
      status: 'fail',
      observedValue: 'refused',
      observedUnit: 'n/a',
      output:
        err instanceof OAuthGrantError
          ? `${label} refused a real refresh (${err.message.slice(0, 100)}); that connection now needs its owner to reconnect`
          : `${label} did not complete a real refresh: ${(err as Error).message.slice(0, 100)}`,
    };
  }
  return timed(elapsed(started), "refreshed a real connection's token");
}

function refreshProbe(name: 'google' | 'microsoft'): DependencyProbe {
  const label = name === 'google' ? 'Google' : 'Microsoft';
  return {
    id: `oauth-${name}:token-refresh`,
    feature: `calendar-${name}`,
    slo: `${label}'s token endpoint answers a refresh within ${SLOW_MS} ms`,
    impact: `${label} Calendar is not answering: your ${label} calendars may not show or save changes.`,
    affects: async (tx, workspaceId) => {
      const rows = await tx
        .select({ id: oauthConnections.id })
        .from(oauthConnections)
        .where(and(eq(oauthConnections.workspaceId, workspaceId), eq(oauthConnections.provider, name)))
        .limit(1);
      return rows.length > 0;
    },
    async measure(deps: AppDeps, { signal, deep }) {
      const provider = resolveProvider(deps, name);
      if (!provider) return disabled(label);
      if (deep) {
        const full = await fullRefresh(deps, name, label);
        if (full) return full;
      }
      const { oauth } = provider;
      const started = performance.now();
      const res = await probeFetch(`oauth-${name}`, oauth.tokenUrl, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'atrium-health-probe-not-a-token',
          client_id: oauth.clientId,
          client_secret: oauth.clientSecret,
        }),
      });
      const ms = elapsed(started);
      const body = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
      // The only healthy answer to a token that cannot be valid (RFC 6749 §5.2): 400 invalid_grant.
      // A 429, 401/403 (the client refused), a 5xx or a body that is not an OAuth error means a real
      // refresh would fail too.
      if (res.status !== 400 || body?.error !== 'invalid_grant') {
        const error = typeof body?.error === 'string' ? ` ${body.error.slice(0, 100)}` : ' (no OAuth error body)';
        return {
          status: 'fail',
          observedValue: res.status,
          observedUnit: 'http status',
          output: `${label}'s token endpoint answered ${res.status}${error} instead of 400 invalid_grant`,
        };
      }
      return timed(ms, 'answered 400 invalid_grant as expected');
    },
  };
}

const zoomProbe: DependencyProbe = {
  id: 'oauth-zoom:token-refresh',
  feature: 'calendar-zoom',
  slo: `Zoom issues an app token within ${SLOW_MS} ms`,
  impact: 'Zoom is not answering: new visits cannot get a Zoom link right now.',
  // Workspaces that have booked Zoom visits.
  affects: async (tx, workspaceId) => {
    const rows = await tx
      .select({ id: calendarAppointments.providerEventId })
      .from(calendarAppointments)
      .where(and(eq(calendarAppointments.workspaceId, workspaceId), isNotNull(calendarAppointments.zoomMeetingId)))
      .limit(1);
    return rows.length > 0;
  },
  async measure(deps, { signal }) {
    const credentials = deps.config.calendar.zoom;
    const base = credentials
      ? 'https://zoom.us'
      : deps.config.emulators
        ? `${deps.selfUrl()}/_emulators/zoom`
        : undefined;
    if (!base) return disabled('Zoom');
    const client = credentials ?? {
      clientId: 'atrium-local',
      clientSecret: 'atrium-local-secret',
      accountId: 'atrium-local',
    };
    const url = new URL(`${base}/oauth/token`);
    url.searchParams.set('grant_type', 'account_credentials');
    url.searchParams.set('account_id', client.accountId ?? 'atrium-local');
    const started = performance.now();
    const res = await probeFetch('oauth-zoom', url, {
      method: 'POST',
      signal,
      headers: {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        accept: 'application/json',
      },
    });
    const ms = elapsed(started);
    const body = (await res.json().catch(() => undefined)) as { access_token?: string } | undefined;
    if (!res.ok || !body?.access_token) {
      return {
        status: 'fail',
        observedValue: res.status,
        observedUnit: 'http status',
        output: `Zoom's token endpoint answered ${res.status}`,
      };
    }
    return timed(ms);
  },
};

export const calendarMonitors: DependencyProbe[] = [refreshProbe('google'), refreshProbe('microsoft'), zoomProbe];
