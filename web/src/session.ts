/** The signed-in session: who am I, sign in/out, switch workspace. */
import { type QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, moveSession, showWorkspace } from './api.js';
import { setClinicZone } from './clinic-time.js';
import { forgetDrafts } from './drafts.js';

export type Tier = 'free' | 'standard' | 'advanced' | 'enterprise';
export type Role = 'admin' | 'member';

export interface Me {
  user: { id: string; email: string; name: string };
  /** `timeZone`: the clinic's IANA zone (every time is shown in it: clinic-time.ts, calendar/time.ts), or null: each device's own. */
  workspace: { id: string; name: string; tier: Tier; organizationId: string | null; timeZone: string | null };
  role: Role;
  isProvider: boolean;
  workspaces: { id: string; name: string; tier: Tier; role: Role }[];
}

export interface SignInInput {
  email: string;
  password: string;
  workspaceId?: string;
}

export const meQueryKey = ['me'] as const;

const isMeQuery = (query: { queryKey: readonly unknown[] }) => query.queryKey[0] === meQueryKey[0];

/**
 * `/me`, or null when there is no session (401). The workspace it names is the one this tab shows from then on
 * (sent with every request, so a switch in another tab is noticed instead of acted on).
 */
async function fetchMe(signal: AbortSignal): Promise<Me | null> {
  try {
    const me = await api.get<Me>('/me', undefined, signal);
    showWorkspace(me.workspace);
    setClinicZone(me.workspace.timeZone);
    return me;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      showWorkspace(null);
      setClinicZone(null);
      return null;
    }
    throw error;
  }
}

/**
 * Read again when the tab comes back after a minute or more, and every 5 minutes: what an admin changed meanwhile
 * (the workspace's name, its clinic time zone, the plan) reaches the other tabs and the other people's browsers.
 */
export function useMe() {
  return useQuery({
    queryKey: meQueryKey,
    queryFn: ({ signal }) => fetchMe(signal),
    staleTime: 60_000,
    refetchOnWindowFocus: true,
    refetchInterval: 5 * 60_000,
  });
}

/** Forget everything cached for the previous session and show the sign-in page. */
export function markSignedOut(queryClient: QueryClient): void {
  forgetDrafts();
  showWorkspace(null);
  queryClient.setQueryData(meQueryKey, null);
  queryClient.removeQueries({ predicate: (query) => !isMeQuery(query) });
}

export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationKey: ['sign-in'],
    // A 401 here means wrong credentials, not an expired session.
    meta: { expectsUnauthenticated: true },
    mutationFn: (input: SignInInput) => moveSession(() => api.post<unknown>('/auth/sign-in', input)),
    onSuccess: async () => {
      forgetDrafts();
      queryClient.removeQueries({ predicate: (query) => !isMeQuery(query) });
      await queryClient.refetchQueries({ queryKey: meQueryKey });
    },
  });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.post<void>('/auth/sign-out'),
    onSuccess: () => markSignedOut(queryClient),
  });
}

/** `beforeReload`: runs once switched, before anything is read again (e.g. leave a page of the old workspace's record). */
export function useSwitchWorkspace(beforeReload?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (workspaceId: string) =>
      moveSession(() => api.post<unknown>('/auth/switch-workspace', { workspaceId })),
    // Every cached answer belongs to the old workspace: reset it all (no stale rows shown), then reload.
    onSuccess: () => {
      beforeReload?.();
      return Promise.all([
        queryClient.resetQueries({ predicate: (query) => !isMeQuery(query) }),
        queryClient.refetchQueries({ queryKey: meQueryKey }),
      ]);
    },
  });
}
