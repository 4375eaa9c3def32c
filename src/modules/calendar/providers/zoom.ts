// Zoom REST API v2 adapter: meetings made with the platform's own Zoom app (server-to-server
// OAuth, account_credentials grant), not a per-user connection. The join URL goes into the event.
import { z } from 'zod';
import { createUpstream, UpstreamError } from '../../../platform/upstream/index.js';
import { commonCode, type ErrorTable, ProviderError, providerError, rateLimitHeaders } from './http.js';
import type { MeetingProvider } from './types.js';

/** Zoom's errors are {code, message}: 124 invalid token, 3001 meeting not found, 429 rate limit. */
export const zoomErrors: ErrorTable = (status, body) => {
  const code = z.object({ code: z.number() }).safeParse(body);
  if (code.success && code.data.code === 3001) return 'event_not_found';
  if (code.success && code.data.code === 124) return 'reauth_required';
  return commonCode(status, 'event');
};

const tokenResponse = z.object({ access_token: z.string().min(1), expires_in: z.coerce.number().optional() });
const meeting = z.object({ id: z.union([z.number(), z.string()]), join_url: z.string() });

export interface ZoomSettings {
  /** The emulator's base, or https://zoom.us for the real service. */
  base: string;
  clientId: string;
  clientSecret: string;
  accountId: string;
  timeoutMs: number;
}

/** Cached app tokens, per (base, client): one token serves every workspace until it expires. */
const tokens = new Map<string, { token: string; until: number }>();

export function zoomMeetings(settings: ZoomSettings): MeetingProvider {
  const emulated = settings.base.includes('/_emulators/');
  const api = emulated ? `${settings.base}/v2` : 'https://api.zoom.us/v2';
  const tokenUrl = emulated ? `${settings.base}/oauth/token` : 'https://zoom.us/oauth/token';
  const cacheKey = `${tokenUrl}|${settings.clientId}`;
  const upstream = createUpstream({
    name: 'calendar:zoom',
    timeoutMs: settings.timeoutMs,
    retries: 0,
    breaker: { consecutiveFailures: 5, failureRatio: 1 },
  });

  const send = async (call: Parameters<typeof upstream.request>[0]) => {
    try {
      return await upstream.request(call);
    } catch (err) {
      throw providerError(
        'zoom',
        err instanceof UpstreamError && err.kind === 'timeout' ? 'provider_timeout' : 'provider_unavailable',
      );
    }
  };

  async function appToken(fresh: boolean): Promise<string> {
    const cached = tokens.get(cacheKey);
    if (!fresh && cached && cached.until > Date.now()) return cached.token;
    const basic = Buffer.from(`${settings.clientId}:${settings.clientSecret}`).toString('base64');
    const res = await send({
      method: 'POST',
      url: tokenUrl,
      query: { grant_type: 'account_credentials', account_id: settings.accountId },
      headers: { authorization: `Basic ${basic}`, accept: 'application/json' },
    });
    const parsed = tokenResponse.safeParse(res.ok ? res.json() : undefined);
    if (!parsed.success) throw providerError('zoom', res.status === 429 ? 'rate_limited' : 'provider_unavailable');
    tokens.set(cacheKey, {
      token: parsed.data.access_token,
      until: Date.now() + Math.max(0, (parsed.data.expires_in ?? 3600) - 60) * 1000,
    });
    return parsed.data.access_token;
  }

  async function call(method: 'POST' | 'PATCH' | 'DELETE', path: string, json?: unknown, requestId?: string) {
    const attempt = async (token: string) =>
      send({
        method,
        url: `${api}${path}`,
        json,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        requestId,
      });
    let res = await attempt(await appToken(false));
    if (res.status === 401) res = await attempt(await appToken(true));
    if (res.ok) return res;
    let body: unknown;
    try {
      body = res.json();
    } catch {
      body = undefined;
    }
    const code = zoomErrors(res.status, body, 'event');
    const headers = code === 'rate_limited' ? rateLimitHeaders(res.headers['retry-after']) : {};
    throw new ProviderError(
      'zoom',
      code === 'reauth_required' ? 'provider_unavailable' : code,
      `Zoom answered ${res.status}`,
      headers,
    );
  }

  return {
    product: 'zoom',
    async createMeeting(input, requestId) {
      const res = await call(
        'POST',
        '/users/me/meetings',
        {
          topic: input.topic.slice(0, 200),
          type: 2,
          start_time: input.start,
          duration: input.durationMinutes,
          timezone: input.timeZone,
          agenda: input.agenda?.slice(0, 2000),
        },
        requestId,
      );
      const created = meeting.parse(res.json());
      return { meetingId: String(created.id), joinUrl: created.join_url };
    },
    async updateMeeting(meetingId, input) {
      await call('PATCH', `/meetings/${encodeURIComponent(meetingId)}`, {
        topic: input.topic,
        start_time: input.start,
        duration: input.durationMinutes,
      });
    },
    async deleteMeeting(meetingId) {
      try {
        await call('DELETE', `/meetings/${encodeURIComponent(meetingId)}`);
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'event_not_found') return;
        throw err;
      }
    },
  };
}
