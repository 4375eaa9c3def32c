/** Webhooks admin API calls and their TanStack Query hooks. */
import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, apiRequest, idempotencyKey, type Page } from '../../api.js';
import { formatInstant } from '../../clinic-time.js';

export { EVENT_TYPES } from '../../../../src/platform/events/event-types.js';

export interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreatedEndpoint extends Endpoint {
  secret: string;
}

export interface Attempt {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  outcome: 'success' | 'fail';
  status: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
  nextAttemptAt: string | null;
}

export interface InboxItem {
  id: string;
  kind: string;
  endpointId: string | null;
  eventId: string | null;
  eventType: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  /** `open` until an admin replays its event (`replayed`) or dismisses it (`resolved`). */
  state: 'open' | 'replayed' | 'resolved';
  handledAt: string | null;
  handledBy: string | null;
  handledByName: string | null;
}

/** Which inbox items the list shows. */
export type InboxFilter = 'open' | 'handled' | 'all';

export interface EndpointInput {
  url: string;
  events?: string[];
  description?: string;
}

export const webhookKeys = {
  all: ['webhooks'] as const,
  endpoints: ['webhooks', 'endpoints'] as const,
  deliveries: (id: string, status: string) => ['webhooks', 'deliveries', id, status] as const,
  inbox: (state: InboxFilter) => ['webhooks', 'inbox', state] as const,
};

const path = (id: string) => `/admin/webhooks/${encodeURIComponent(id)}`;

export function useEndpoints() {
  return useQuery({
    queryKey: webhookKeys.endpoints,
    queryFn: ({ signal }) => api.get<{ items: Endpoint[] }>('/admin/webhooks', undefined, signal),
  });
}

export function useDeliveries(endpointId: string, status: string) {
  return useInfiniteQuery({
    queryKey: webhookKeys.deliveries(endpointId, status),
    queryFn: ({ pageParam, signal }) =>
      api.get<Page<Attempt>>(`${path(endpointId)}/deliveries`, { status, limit: 25, cursor: pageParam }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    placeholderData: keepPreviousData,
    // Retries land on their own schedule; keep the log fresh while it is open.
    refetchInterval: 5000,
  });
}

export function useInbox(state: InboxFilter) {
  return useInfiniteQuery({
    queryKey: webhookKeys.inbox(state),
    queryFn: ({ pageParam, signal }) =>
      api.get<Page<InboxItem>>('/inbox', { state, limit: 25, cursor: pageParam }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
}

/** Dismisses an open inbox item without a replay (`resolved`). */
export function useResolveInboxItem() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (id: string) => api.post<InboxItem>(`/inbox/${encodeURIComponent(id)}/resolve`),
    // Also after a refusal (another admin handled it first): the list shows where it went.
    onSettled: invalidate,
  });
}

export function useReopenInboxItem() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (id: string) => api.post<InboxItem>(`/inbox/${encodeURIComponent(id)}/reopen`),
    onSettled: invalidate,
  });
}

/** What a bulk action did: how many items it handled, and those it could not (with why). */
export interface BulkOutcome {
  action: 'resolve' | 'replay';
  done: number;
  failed: { item: InboxItem; error: unknown }[];
}

/**
 * Resolves or replays several open inbox items, one call each (each audited and refused on its own, as if done one
 * by one; nothing new on the server). A replay is sent once per event and endpoint: it handles every open dead
 * letter of that event to that endpoint.
 */
export function useBulkInbox() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async ({ action, items }: { action: BulkOutcome['action']; items: InboxItem[] }) => {
      const outcome: BulkOutcome = { action, done: 0, failed: [] };
      const sent = new Set<string>();
      for (const item of items) {
        try {
          if (action === 'resolve') {
            await api.post(`/inbox/${encodeURIComponent(item.id)}/resolve`);
          } else if (item.endpointId && item.eventId) {
            const key = `${item.endpointId} ${item.eventId}`;
            if (!sent.has(key)) {
              sent.add(key);
              await api.post(`${path(item.endpointId)}/replay/${encodeURIComponent(item.eventId)}`);
            }
          } else {
            continue;
          }
          outcome.done += 1;
        } catch (error) {
          outcome.failed.push({ item, error });
        }
      }
      return outcome;
    },
    onSettled: invalidate,
  });
}

/** randomUUID needs a secure context; plain-http deployments still get a unique enough key. */

function useInvalidate() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: webhookKeys.all });
}

export function useCreateEndpoint() {
  const invalidate = useInvalidate();
  return useMutation({
    // A fresh key per submission: a retried request (e.g. after a dropped connection) creates one endpoint.
    mutationFn: (input: EndpointInput) =>
      apiRequest<CreatedEndpoint>('/admin/webhooks', {
        method: 'POST',
        body: input,
        headers: { 'Idempotency-Key': idempotencyKey() },
      }),
    onSuccess: invalidate,
  });
}

/** What PATCH /admin/webhooks/:id may change (a new URL is checked like on create). */
export interface EndpointChanges {
  url?: string;
  description?: string | null;
  events?: string[];
  enabled?: boolean;
}

export function useUpdateEndpoint() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: ({ id, ...changes }: { id: string } & EndpointChanges) => api.patch<Endpoint>(path(id), changes),
    onSuccess: invalidate,
  });
}

export function useDeleteEndpoint() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (id: string) => api.delete(path(id)),
    // Not awaited: the caller navigates away first, so the page never shows the deleted endpoint as missing.
    onSuccess: () => void invalidate(),
  });
}

export function useRotateSecret() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (id: string) =>
      api.post<{ id: string; secret: string; previousSecretExpiresAt: string }>(`${path(id)}/rotate-secret`),
    onSuccess: invalidate,
  });
}

export function useReplay() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: ({ endpointId, eventId }: { endpointId: string; eventId: string }) =>
      api.post<{ eventId: string; state: 'pending' }>(`${path(endpointId)}/replay/${encodeURIComponent(eventId)}`),
    onSuccess: invalidate,
  });
}

export function useSendTestEvent() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (endpointId: string) => api.post<{ eventId: string }>(`${path(endpointId)}/test`),
    onSuccess: invalidate,
  });
}

export interface DeliveryDetail extends Attempt {
  request: { url: string; headers: Record<string, string>; body: string } | null;
  response: { status: number; headers: Record<string, string>; body: string; truncated: boolean } | null;
}

export function useDeliveryDetail(endpointId: string, deliveryId: string | null) {
  return useQuery({
    queryKey: ['webhooks', 'delivery', endpointId, deliveryId],
    enabled: deliveryId !== null,
    queryFn: ({ signal }) =>
      api.get<DeliveryDetail>(
        `${path(endpointId)}/deliveries/${encodeURIComponent(deliveryId ?? '')}`,
        undefined,
        signal,
      ),
  });
}

export function formatDateTime(value: string | null): string {
  if (!value) return '—';
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? value : formatInstant(at, { dateStyle: 'medium', timeStyle: 'medium' });
}
