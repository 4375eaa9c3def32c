/** Calendar API calls (contract §5) and their TanStack Query hooks. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, apiRequest, idempotencyKey } from '../../api.js';
import { useCurrentMe } from '../../me-context.js';

export type Provider = 'google' | 'microsoft';
export type Conference = 'auto' | 'meet' | 'teams' | 'zoom';
/** Whether an event blocks its calendar's time (the provider's free/busy flag). */
export type ShowAs = 'busy' | 'free';

export interface Connection {
  id: string;
  provider: Provider;
  accountEmail: string;
  status: 'active' | 'reauth_required';
  createdAt: string;
  userId: string;
}

export interface CalendarInfo {
  id: string;
  provider: Provider;
  name: string;
  accountEmail: string;
  primary: boolean;
  connectionId: string;
  hostUserId: string;
  color: string | null;
}

export interface CalendarEvent {
  id: string;
  provider: Provider;
  calendar: string;
  title: string;
  description: string | null;
  start: string;
  end: string;
  timeZone: string;
  allDay: boolean;
  location: string | null;
  attendees: { email: string; name: string | null; responseStatus: string }[];
  organizer: string | null;
  recurrence: string[] | null;
  recurringEventId: string | null;
  conference: { product: 'meet' | 'teams' | 'zoom'; joinUrl: string } | null;
  /** Busy blocks visits with the calendar's provider at that time (all-day events too); free never does. */
  showAs: ShowAs;
  telehealth: { roomId: string; joinUrl: string } | null;
  /** The video room's state, also before it has a link (pending) or when it could not be made (failed). */
  telehealthRoom: {
    roomId: string;
    status: 'pending' | 'warm' | 'live' | 'failed';
    failureReason: string | null;
  } | null;
  patientId: string | null;
  hostUserId: string | null;
  status: 'confirmed' | 'cancelled' | 'completed';
  workspaceId: string;
}

export interface Task {
  id: string;
  title: string;
  eventId: string | null;
  dueAt: string | null;
  assigneeUserId: string | null;
  done: boolean;
  createdAt: string;
}

export interface Warning {
  provider: string;
  calendar: string;
  code: string;
}

export interface Capabilities {
  tier: string;
  allowed: Record<
    'meet' | 'teams' | 'zoom' | 'auto' | 'recurring' | 'patientAware' | 'hqView' | 'bothProviders',
    boolean
  >;
}

export interface Draft {
  title?: string;
  start?: string;
  end?: string;
  timeZone?: string;
  allDay?: boolean;
  description?: string | null;
  location?: string | null;
  attendees?: { email: string }[];
  recurrence?: string[] | null;
  conference?: Conference | null;
  preferredConference?: 'zoom';
  patientId?: string | null;
  hostUserId?: string | null;
  status?: 'confirmed' | 'cancelled' | 'completed';
  showAs?: ShowAs;
}

const KEY = ['calendar'] as const;

export const PROVIDER_LABEL: Record<string, string> = { google: 'Google', microsoft: 'Microsoft' };
export const SHOW_AS_LABEL: Record<ShowAs, string> = { busy: 'Busy', free: 'Free' };
export const CONFERENCE_LABEL: Record<string, string> = {
  meet: 'Google Meet',
  teams: 'Microsoft Teams',
  zoom: 'Zoom',
  auto: 'Automatic (Meet or Teams)',
};

export const useConnections = () =>
  useQuery({
    queryKey: [...KEY, 'connections'],
    queryFn: () => api.get<{ items: Connection[] }>('/calendar/connections'),
  });

export const useCalendars = () =>
  useQuery({
    queryKey: [...KEY, 'calendars'],
    queryFn: () => api.get<{ items: CalendarInfo[] }>('/calendar/calendars'),
  });

export const useCapabilities = () =>
  useQuery({
    queryKey: [...KEY, 'capabilities'],
    queryFn: () => api.get<Capabilities>('/calendar/capabilities'),
    staleTime: 5 * 60_000,
  });

/**
 * How often the window is read again while an event whose video room is still being made is open, so its join
 * link appears by itself (only then: every read of a connected calendar is an audited token use).
 */
export const ROOM_POLL_MS = 5_000;
/** For at most this long per opening (a room stuck while the video provider is out is not read for all day). */
export const ROOM_POLL_FOR_MS = 5 * 60_000;

/** Events of a window (≤ 62 days); with `patientId`, only that patient's appointments (each read audited). */
export const useEvents = (
  timeMin: string,
  timeMax: string,
  options: { scope?: 'organization'; patientId?: string; enabled?: boolean; poll?: boolean } = {},
) =>
  useQuery({
    queryKey: [...KEY, 'events', timeMin, timeMax, options.scope ?? 'workspace', options.patientId ?? null],
    queryFn: ({ signal }) =>
      api.get<{ items: CalendarEvent[]; warnings: Warning[] }>(
        '/calendar/events',
        { timeMin, timeMax, scope: options.scope, patientId: options.patientId },
        signal,
      ),
    placeholderData: keepPreviousData,
    enabled: options.enabled ?? true,
    refetchInterval: options.poll ? ROOM_POLL_MS : false,
  });

/** One local day: its events and, for the sidebar, the tasks of those events and those due that day. */
export const useDay = (date: string, timeZone: string, enabled: boolean, poll = false) =>
  useQuery({
    queryKey: [...KEY, 'day', date, timeZone],
    queryFn: ({ signal }) =>
      api.get<{ date: string; events: CalendarEvent[]; tasks: Task[]; warnings: Warning[] }>(
        '/calendar/day',
        { date, timeZone },
        signal,
      ),
    placeholderData: keepPreviousData,
    enabled,
    refetchInterval: poll ? ROOM_POLL_MS : false,
  });

import type { ProviderMatch } from '../../../../src/modules/calendar/scheduling.js';

export type { ProviderMatch };

/** Who can see this patient in this slot: free and preferred providers first (Advanced+). */
export const useProviderMatch = (slot: { patientId: string; start: string; end: string } | null) =>
  useQuery({
    queryKey: [...KEY, 'match', slot],
    enabled: slot !== null,
    queryFn: ({ signal }) =>
      api.get<{ items: ProviderMatch[] }>('/calendar/providers/match', slot ?? undefined, signal),
    placeholderData: keepPreviousData,
    staleTime: 15_000,
  });

export function useCreateTask() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (input: { title: string; eventId?: string; dueAt?: string }) =>
      apiRequest<Task>('/tasks', { method: 'POST', body: input, headers: { 'Idempotency-Key': idempotencyKey() } }),
    onSuccess: invalidate,
  });
}

export function useUpdateTask() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (input: { id: string; done: boolean }) => api.patch<Task>(`/tasks/${input.id}`, { done: input.done }),
    onSuccess: invalidate,
  });
}

function useInvalidate() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: KEY });
}

export function useCreateEvent() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (input: { calendar: string; draft: Draft }) =>
      apiRequest<{ eventId: string; event: CalendarEvent }>('/calendar/events', {
        method: 'POST',
        body: input,
        headers: { 'Idempotency-Key': idempotencyKey() },
      }),
    onSuccess: invalidate,
  });
}

export function usePatchEvent() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (input: { event: string; draft: Draft }) =>
      api.patch<{ eventId: string; event: CalendarEvent }>('/calendar/events', input),
    onSuccess: invalidate,
  });
}

export function useDeleteEvent() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (eventId: string) => apiRequest('/calendar/events', { method: 'DELETE', query: { event: eventId } }),
    onSuccess: invalidate,
  });
}

/** Starts the provider's consent flow; the browser leaves for the provider and comes back to /calendar. */
export function useConnect() {
  const me = useCurrentMe();
  return useMutation({
    // With `connectionId` (reconnecting), the provider is asked for that connection's account, so it is repaired;
    // a new connection suggests the person's own address at the provider's sign-in (`login_hint`).
    mutationFn: (target: { provider: Provider; connectionId?: string }) =>
      api.post<{ authorizeUrl: string }>('/calendar/connections', { ...target, loginHint: me.user.email }),
    onSuccess: ({ authorizeUrl }) => window.location.assign(authorizeUrl),
  });
}

export function useDisconnect() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (id: string) => api.delete(`/calendar/connections/${id}`),
    onSuccess: invalidate,
  });
}

/** A palette for calendars without a provider colour, distinct in light and dark mode. */
const PALETTE = ['#2557d6', '#1a7f4b', '#b54708', '#7a2bb5', '#0e7490', '#be123c'];
/** Below this ("redmean" RGB distance, 0–765) two colours read as one on the week grid. */
const TOO_CLOSE = 150;

function rgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** A cheap perceptual distance between two `#rrggbb` colours (weighted by the mean red, as the eye is). */
function distance(a: string, b: string): number {
  const [r1, g1, b1] = rgb(a);
  const [r2, g2, b2] = rgb(b);
  const r = (r1 + r2) / 2;
  return Math.sqrt((2 + r / 256) * (r1 - r2) ** 2 + 4 * (g1 - g2) ** 2 + (2 + (255 - r) / 256) * (b1 - b2) ** 2);
}

const given = new WeakMap<CalendarInfo[], Map<string, string>>();

/**
 * Each calendar's colour on the grid and in the legend: its provider's, unless that is close to a colour an
 * earlier calendar already has (Google's and Outlook's default calendars are both blue), then the first
 * palette colour far from every one given; without a provider colour, a palette colour too.
 */
function calendarColors(calendars: CalendarInfo[]): Map<string, string> {
  const known = given.get(calendars);
  if (known) return known;
  const colors = new Map<string, string>();
  const used: string[] = [];
  calendars.forEach((cal, index) => {
    const own = cal.color && /^#[0-9a-f]{6}$/i.test(cal.color) ? cal.color : null;
    const clear = (c: string) => used.every((u) => distance(u, c) >= TOO_CLOSE);
    const color = own && clear(own) ? own : (PALETTE.find(clear) ?? own ?? PALETTE[index % PALETTE.length]);
    colors.set(cal.id, color);
    used.push(color);
  });
  given.set(calendars, colors);
  return colors;
}

export function colorOf(calendars: CalendarInfo[], id: string): string {
  return calendarColors(calendars).get(id) ?? PALETTE[0];
}
