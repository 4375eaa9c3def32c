// The resolver: which adapter serves a provider name, where it points (the real service when its
// credentials are configured, the emulator when emulators are on, otherwise disabled), and the
// OAuth client platform/oauth uses for it.

import type { OAuthDeps, OAuthProvider } from '../../../platform/oauth/index.js';
import type { AppDeps } from '../../../platform/types.js';
import { googleCalendar } from './google.js';
import { microsoftCalendar } from './microsoft.js';
import type { CalendarProvider, CalendarProviderName, MeetingProvider } from './types.js';
import { zoomMeetings } from './zoom.js';

export type { CalendarProvider, CalendarProviderName, MeetingProvider, ProviderEvent } from './types.js';

const ADAPTERS: Record<CalendarProviderName, CalendarProvider> = {
  google: googleCalendar,
  microsoft: microsoftCalendar,
};

export const PROVIDER_NAMES = Object.keys(ADAPTERS) as CalendarProviderName[];

/** The emulators accept any client; these only make the requests look like real ones. */
const EMULATOR_CLIENT = { clientId: 'atrium-local', clientSecret: 'atrium-local-secret' };

export interface ResolvedProvider {
  adapter: CalendarProvider;
  apiBase: string;
  oauth: OAuthProvider;
}

function baseOf(deps: AppDeps, name: 'google' | 'microsoft' | 'zoom') {
  const credentials = deps.config.calendar[name];
  if (credentials) return { base: `https://${name}.invalid`, credentials };
  if (deps.config.emulators) return { base: `${deps.selfUrl()}/_emulators/${name}`, credentials: EMULATOR_CLIENT };
  return undefined;
}

/** The adapter for `name`, or undefined when the provider is unknown or disabled. */
export function resolveProvider(deps: AppDeps, name: string): ResolvedProvider | undefined {
  const adapter = ADAPTERS[name as CalendarProviderName];
  const where = adapter && baseOf(deps, adapter.name);
  if (!adapter || !where) return undefined;
  return {
    adapter,
    apiBase: adapter.apiBaseUrl(where.base),
    oauth: adapter.oauth(where.base, where.credentials, deps.config.calendar.timeoutMs),
  };
}

/** What platform/oauth needs to use the calendar providers' tokens. */
export function oauthDeps(deps: AppDeps): OAuthDeps {
  return { db: deps.db, config: deps.config, oauthProviders: (name) => resolveProvider(deps, name)?.oauth };
}

/** Zoom meetings with the platform's app; undefined when Zoom is disabled. */
export function resolveZoom(deps: AppDeps): MeetingProvider | undefined {
  const where = baseOf(deps, 'zoom');
  if (!where) return undefined;
  const zoom = deps.config.calendar.zoom;
  return zoomMeetings({
    base: where.base.startsWith('https://zoom.invalid') ? 'https://zoom.us' : where.base,
    clientId: where.credentials.clientId,
    clientSecret: where.credentials.clientSecret,
    accountId: zoom?.accountId ?? 'atrium-local',
    timeoutMs: deps.config.calendar.timeoutMs,
  });
}
