/** Workspace administration (contract §2a): members, invitations, tokens, audit log; and the account. */
import { useInfiniteQuery, useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { API_BASE, api, type Page } from '../../api.js';
import { fullName, patientNameQuery } from '../patients/patients-api.js';

const enc = encodeURIComponent;

export interface WorkspaceMember {
  userId: string;
  name: string;
  email: string | null;
  role: 'admin' | 'member';
  isProvider: boolean;
  status: 'active' | 'invited';
  lastSignInAt: string | null;
}

/** A connected calendar account (`GET /calendar/connections`: an admin sees every member's, with `userId`). */
export interface CalendarConnection {
  id: string;
  provider: 'google' | 'microsoft';
  accountEmail: string;
  status: 'active' | 'reauth_required';
  userId: string;
}

export interface ApiToken {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string | null;
  userId?: string;
  userName?: string;
}

export interface AuditRow {
  id: string;
  kind: string;
  at: string;
  actorUserId: string | null;
  [member: string]: unknown;
}

export const AUDIT_KINDS = [
  'skill_invocation',
  'token_access',
  'phi_access',
  'message_send',
  'break_glass',
  'admin_action',
] as const;

export { AUDIT_KIND_LABELS } from './audit-words.js';

export const adminKeys = {
  members: ['members'] as const,
  adminTokens: ['admin', 'tokens'] as const,
  myTokens: ['auth', 'tokens'] as const,
  audit: (filter: AuditFilter) => ['audit', 'list', filter] as const,
};

export function useMembers() {
  return useQuery({
    queryKey: adminKeys.members,
    queryFn: ({ signal }) => api.get<{ items: WorkspaceMember[] }>('/members', undefined, signal),
  });
}

/**
 * The workspace's connected calendar accounts, to say before removing a member which of theirs go with them.
 * Same key as the calendar page's list (one cache, refreshed by a removal); not retried: without it the
 * confirmation simply names no calendars.
 */
export function useCalendarConnections() {
  return useQuery({
    queryKey: ['calendar', 'connections'],
    queryFn: ({ signal }) => api.get<{ items: CalendarConnection[] }>('/calendar/connections', undefined, signal),
    retry: false,
  });
}

export function useInvite() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { email: string; name: string; role: 'admin' | 'member'; isProvider: boolean }) =>
      api.post<{ userId: string; replacedEarlier: boolean }>('/members/invitations', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.members }),
  });
}

type MemberChange = { userId: string; role?: 'admin' | 'member'; isProvider?: boolean };

/** Shows the change at once (the switch moves when pressed), and puts the list back if the server refuses. */
export function useUpdateMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, ...changes }: MemberChange) =>
      api.patch<WorkspaceMember>(`/members/${enc(userId)}`, changes),
    onMutate: async ({ userId, ...changes }: MemberChange) => {
      await queryClient.cancelQueries({ queryKey: adminKeys.members });
      const before = queryClient.getQueryData<{ items: WorkspaceMember[] }>(adminKeys.members);
      if (before) {
        queryClient.setQueryData(adminKeys.members, {
          ...before,
          items: before.items.map((m) => (m.userId === userId ? { ...m, ...changes } : m)),
        });
      }
      return { before };
    },
    onError: (_error, _change, context) => {
      if (context?.before) queryClient.setQueryData(adminKeys.members, context.before);
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: adminKeys.members }),
  });
}

export function useRemoveMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => api.delete(`/members/${enc(userId)}`),
    onSuccess: () => {
      // The member's calendar accounts were disconnected with them (docs/calendar.md). Not awaited: the row
      // goes with the members' refetch, and a caller's callbacks must run before that.
      void queryClient.invalidateQueries({ queryKey: ['calendar'] });
      return queryClient.invalidateQueries({ queryKey: adminKeys.members });
    },
  });
}

export function useAdminTokens() {
  return useQuery({
    queryKey: adminKeys.adminTokens,
    queryFn: ({ signal }) => api.get<{ items: ApiToken[] }>('/admin/tokens', undefined, signal),
  });
}

export function useRevokeAdminToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.delete(`/admin/tokens/${enc(id)}`),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: adminKeys.adminTokens }),
        queryClient.invalidateQueries({ queryKey: adminKeys.myTokens }),
      ]),
  });
}

export function useMyTokens() {
  return useQuery({
    queryKey: adminKeys.myTokens,
    queryFn: ({ signal }) => api.get<{ items: ApiToken[] }>('/auth/tokens', undefined, signal),
  });
}

export function useCreateToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api.post<ApiToken & { token: string }>('/auth/tokens', { name }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: adminKeys.myTokens }),
        queryClient.invalidateQueries({ queryKey: adminKeys.adminTokens }),
      ]),
  });
}

export function useRevokeMyToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.delete(`/auth/tokens/${enc(id)}`),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: adminKeys.myTokens }),
        queryClient.invalidateQueries({ queryKey: adminKeys.adminTokens }),
      ]),
  });
}

export function useChangePassword() {
  return useMutation({
    mutationFn: (input: { currentPassword: string; newPassword: string }) => api.post<void>('/auth/password', input),
  });
}

export interface AuditFilter {
  kind?: string;
  actorUserId?: string;
  patientId?: string;
  from?: string;
  to?: string;
}

/**
 * A day picked in the filter (`YYYY-MM-DD`) is a day where the reader is, as the table's times are: the API gets
 * the instants it starts and ends there (`to` is exclusive, so To covers its whole day). Anything else in the URL
 * goes to the API as it is, which judges it.
 */
export function auditApiFilter(filter: AuditFilter): AuditFilter {
  const localMidnight = (day: string, plusDays: number) => {
    const [y, m, d] = day.split('-').map(Number);
    // Local midnight of that day: Date counts in the reader's zone, DST included (setFullYear, as the
    // constructor would read years 0-99 as 1900-1999).
    const at = new Date(2000, 0, 1);
    at.setFullYear(y, m - 1, d + plusDays);
    at.setHours(0, 0, 0, 0);
    return at.toISOString();
  };
  const isDay = (value: string | undefined): value is string => /^\d{4}-\d{2}-\d{2}$/.test(value ?? '');
  return {
    ...filter,
    ...(isDay(filter.from) ? { from: localMidnight(filter.from, 0) } : {}),
    ...(isDay(filter.to) ? { to: localMidnight(filter.to, 1) } : {}),
  };
}

export function useAudit(filter: AuditFilter, options: { enabled?: boolean } = {}) {
  return useInfiniteQuery({
    enabled: options.enabled ?? true,
    queryKey: adminKeys.audit(filter),
    queryFn: ({ pageParam, signal }) =>
      api.get<Page<AuditRow>>('/audit', { ...auditApiFilter(filter), limit: 50, cursor: pageParam }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}

/** The same filter as a CSV download (the browser sends the session cookie). */
export function auditCsvUrl(filter: AuditFilter): string {
  const params = new URLSearchParams({ format: 'csv' });
  for (const [key, value] of Object.entries(auditApiFilter(filter))) if (value) params.set(key, value);
  return `${API_BASE}/audit?${params.toString()}`;
}

/** Names of the patients the rows mention, by id (missing while loading or when the patient is gone). */
export function usePatientNames(ids: string[]): Map<string, string> {
  const unique = [...new Set(ids)];
  const results = useQueries({ queries: unique.map((id) => patientNameQuery(id)) });
  const names = new Map<string, string>();
  unique.forEach((id, i) => {
    const patient = results[i]?.data;
    if (patient) names.set(id, fullName(patient));
  });
  return names;
}
