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

export function useInvite() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { email: string; name: string; role: 'admin' | 'member'; isProvider: boolean }) =>
      api.post<{ userId: string }>('/members/invitations', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.members }),
  });
}

export function useUpdateMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, ...changes }: { userId: string; role?: 'admin' | 'member'; isProvider?: boolean }) =>
      api.patch<WorkspaceMember>(`/members/${enc(userId)}`, changes),
    onSettled: () => queryClient.invalidateQueries({ queryKey: adminKeys.members }),
  });
}

export function useRemoveMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => api.delete(`/members/${enc(userId)}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.members }),
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

export function useAudit(filter: AuditFilter) {
  return useInfiniteQuery({
    queryKey: adminKeys.audit(filter),
    queryFn: ({ pageParam, signal }) =>
      api.get<Page<AuditRow>>('/audit', { ...filter, limit: 50, cursor: pageParam }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}

/** The same filter as a CSV download (the browser sends the session cookie). */
export function auditCsvUrl(filter: AuditFilter): string {
  const params = new URLSearchParams({ format: 'csv' });
  for (const [key, value] of Object.entries(filter)) if (value) params.set(key, value);
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
