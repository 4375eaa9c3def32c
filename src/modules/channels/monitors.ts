// Health probes of the channels (contract §9): the share of each channel's webhook calls that were
// verified and well-formed since the last run (`sms:acceptance-rate`, `chat-<channel>:acceptance-rate`).
import { performance } from 'node:perf_hooks';
import { measureAcceptance } from '../../platform/acceptance.js';
import type { DependencyProbe } from '../../platform/module.js';
import { probeFetch } from '../../platform/upstream/index.js';
import { GRAPH_VERSION } from './providers/meta.js';
import { CHANNEL_LABEL, CHANNELS } from './providers/types.js';
import { acceptanceSource, hasLiveConnection } from './service.js';

const acceptance: DependencyProbe[] = CHANNELS.map((channel) => ({
  id: channel === 'sms' ? 'sms:acceptance-rate' : `chat-${channel}:acceptance-rate`,
  feature: `channel-${channel}`,
  slo: '≥ 95 % of webhook calls verified and well-formed',
  impact: `${CHANNEL_LABEL[channel]} messages from patients may not be arriving.`,
  affects: (tx, workspaceId) => hasLiveConnection(tx, workspaceId, [channel]),
  measure: (deps) => measureAcceptance(deps, acceptanceSource(channel), deps.config.health.intervalMs),
}));

/** Graph's error codes for a request it refused on its merits: invalid parameter, app, token. */
const REFUSAL_CODES = new Set([100, 101, 190]);

/**
 * Meta's token endpoint (WhatsApp, Messenger, Instagram): a long-lived token exchange with a token
 * that cannot be valid must come back as Graph's OAuthException, in time; called directly.
 */
export const metaTokenProbe: DependencyProbe = {
  id: 'oauth-meta:token-refresh',
  feature: 'channel-meta',
  slo: 'Graph’s token endpoint answers within 2000 ms',
  impact: 'WhatsApp, Messenger and Instagram replies may not go out right now.',
  affects: (tx, workspaceId) => hasLiveConnection(tx, workspaceId, ['whatsapp', 'messenger', 'instagram']),
  async measure(deps, { signal }) {
    const base = deps.config.emulators ? `${deps.selfUrl()}/_emulators/meta` : 'https://graph.facebook.com';
    const url = new URL(`${base}/${GRAPH_VERSION}/oauth/access_token`);
    url.searchParams.set('grant_type', 'fb_exchange_token');
    url.searchParams.set('client_id', 'atrium-health-probe');
    url.searchParams.set('client_secret', 'atrium-health-probe');
    url.searchParams.set('fb_exchange_token', 'atrium-health-probe-not-a-token');
    const started = performance.now();
    const res = await probeFetch('oauth-meta', url, { signal, headers: { accept: 'application/json' } });
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const body = (await res.json().catch(() => undefined)) as
      | { error?: { type?: unknown; code?: unknown } }
      | undefined;
    const code = body?.error?.code;
    // Healthy: Graph refuses the request itself, as a 400 OAuthException saying the parameters (100),
    // the app (101) or the token (190) are not valid. Graph also sends throttling (4, 17, 32, 613) and
    // outages (1, 2) as OAuthExceptions, and those mean a real exchange would fail too.
    if (res.status !== 400 || body?.error?.type !== 'OAuthException' || !REFUSAL_CODES.has(code as number)) {
      return {
        status: 'fail',
        observedValue: res.status,
        observedUnit: 'http status',
        output: `Graph answered ${res.status}${
          typeof body?.error?.type === 'string'
            ? ` ${body.error.type.slice(0, 100)} code ${String(code).slice(0, 20)}`
            : ''
        } instead of 400 OAuthException (100, 101 or 190)`,
      };
    }
    return {
      status: ms <= 2_000 ? 'pass' : 'warn',
      observedValue: ms,
      observedUnit: 'ms',
      output: `answered 400 OAuthException code ${code} as expected`,
    };
  },
};

export const channelMonitors: DependencyProbe[] = [...acceptance, metaTokenProbe];
