/** Direct-messages API calls, TanStack Query hooks, and the live event stream of an open thread. */
import { type InfiniteData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { api, openEventStream, type Page } from '../../api.js';
import { clinicDate, formatInstant } from '../../clinic-time.js';

export interface Mention {
  type: 'patient';
  patientId: string;
  displayName: string | null;
}

export interface Message {
  id: string;
  threadId: string;
  senderId: string;
  body: string;
  mentions: Mention[];
  createdAt: string;
}

export interface Participant {
  userId: string;
  name: string;
  /** Removed from the workspace: still in the thread under their name, reading nothing more. */
  former: boolean;
}

export interface Thread {
  id: string;
  kind: 'direct' | 'group';
  title: string;
  customTitle: string | null;
  participants: Participant[];
  createdAt: string;
  updatedAt: string;
}

export interface ThreadListItem extends Thread {
  lastMessage: Message | null;
  unreadCount: number;
}

export interface Receipt {
  userId: string;
  lastReadMessageId: string | null;
  readAt: string | null;
}

export interface HistoryPage {
  thread: Thread;
  items: Message[];
  nextCursor: string | null;
  receipts: Receipt[];
}

export interface Member {
  userId: string;
  name: string;
  /** Shown to workspace admins only (null for everyone else). */
  email: string | null;
  role: 'admin' | 'member';
  status: 'active' | 'invited';
}

export interface PatientSummary {
  id: string;
  givenName: string;
  familyName: string;
  dateOfBirth?: string | null;
  mrn: string | null;
}

export const messageKeys = {
  threads: ['direct-messages', 'threads'] as const,
  history: (threadId: string) => ['direct-messages', 'history', threadId] as const,
};

const enc = encodeURIComponent;

export function useThreads() {
  return useQuery({
    queryKey: messageKeys.threads,
    queryFn: ({ signal }) => api.get<Page<ThreadListItem>>('/direct-messages', { limit: 100 }, signal),
    // Live updates arrive for the open thread; other threads' badges refresh on this interval.
    refetchInterval: 5_000,
  });
}

export interface SearchHit {
  message: Message;
  thread: Thread;
  /**
   * Excerpts of the body with & < > " ' as entities and the matches in `<mark>…</mark>`, the only markup
   * (docs/direct-messages.md, Search); read by `snippetParts`, never as HTML.
   */
  snippet: string;
  rank: number;
}

/** Admins' full-text search over every message of the workspace (audited by the server); off while `q` is empty. */
export function useMessageSearch(q: string) {
  return useQuery({
    queryKey: ['direct-messages', 'search', q],
    enabled: q.length > 0,
    queryFn: ({ signal }) =>
      api.get<{ items: SearchHit[]; nextCursor: string | null; truncated: boolean }>(
        '/direct-messages/search',
        { q, limit: 50 },
        signal,
      ),
  });
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
  '&#x27;': "'",
};

/** A snippet as text parts, the matches marked: the server's escaping undone here, so nothing is parsed as HTML. */
export function snippetParts(snippet: string): { text: string; match: boolean }[] {
  const parts: { text: string; match: boolean }[] = [];
  let match = false;
  for (const piece of snippet.split(/(<mark>|<\/mark>)/)) {
    if (piece === '<mark>') match = true;
    else if (piece === '</mark>') match = false;
    else if (piece) parts.push({ text: piece.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (e) => ENTITIES[e] ?? e), match });
  }
  return parts;
}

export function useHistory(threadId: string) {
  return useInfiniteQuery({
    queryKey: messageKeys.history(threadId),
    queryFn: ({ pageParam, signal }) =>
      api.get<HistoryPage>(`/direct-messages/${enc(threadId)}`, { limit: 50, before: pageParam }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}

export function useMembers() {
  return useQuery({
    queryKey: ['members'],
    queryFn: ({ signal }) => api.get<{ items: Member[] }>('/members', undefined, signal),
    staleTime: 60_000,
  });
}

/** Patients for the mention picker; the previous results stay while the next search runs. */
export { usePatientSearch } from '../patients/patients-api.js';

type HistoryData = InfiniteData<HistoryPage, string | null>;

/** Puts a message into the cached history (newest page first), once. */
function addMessage(data: HistoryData | undefined, message: Message): HistoryData | undefined {
  if (!data || data.pages.length === 0) return data;
  if (data.pages.some((p) => p.items.some((m) => m.id === message.id))) return data;
  const [first, ...rest] = data.pages;
  return { ...data, pages: [{ ...first, items: [message, ...first.items] }, ...rest] };
}

function setReceipt(data: HistoryData | undefined, receipt: Receipt): HistoryData | undefined {
  if (!data || data.pages.length === 0) return data;
  const [first, ...rest] = data.pages;
  const receipts = first.receipts.some((r) => r.userId === receipt.userId)
    ? first.receipts.map((r) => (r.userId === receipt.userId ? receipt : r))
    : [...first.receipts, receipt];
  return { ...data, pages: [{ ...first, receipts }, ...rest] };
}

export function useSendMessage() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { recipients?: string[]; threadId?: string; body: string; title?: string }) =>
      api.post<{ threadId: string; message: Message }>('/direct-messages', input),
    onSuccess: async ({ threadId, message }) => {
      queryClient.setQueryData<HistoryData>(messageKeys.history(threadId), (d) => addMessage(d, message));
      await queryClient.invalidateQueries({ queryKey: messageKeys.threads });
    },
  });
}

export function useMarkRead(threadId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (lastReadMessageId?: string) =>
      api.patch<{ receipt: Receipt }>(`/direct-messages/${enc(threadId)}`, { read: true, lastReadMessageId }),
    onSuccess: async ({ receipt }) => {
      queryClient.setQueryData<HistoryData>(messageKeys.history(threadId), (d) => setReceipt(d, receipt));
      await queryClient.invalidateQueries({ queryKey: messageKeys.threads });
    },
  });
}

export type StreamState = 'connecting' | 'live' | 'reconnecting';

/**
 * Subscribes to the thread's Server-Sent Events (the session cookie goes along on same-origin
 * requests). EventSource reconnects by itself and sends Last-Event-ID, so nothing is missed.
 */
export function useThreadEvents(threadId: string, onMessage: (message: Message) => void): StreamState {
  const queryClient = useQueryClient();
  const [state, setState] = useState<StreamState>('connecting');
  const onMessageRef = useRef(onMessage);
  onMessageRef.current = onMessage;
  useEffect(() => {
    const source = openEventStream(`/direct-messages/${enc(threadId)}/events`);
    setState('connecting');
    source.onopen = () => setState('live');
    source.onerror = () => setState('reconnecting');
    source.addEventListener('message.created', (event) => {
      const message = JSON.parse((event as MessageEvent<string>).data) as Message;
      queryClient.setQueryData<HistoryData>(messageKeys.history(threadId), (d) => addMessage(d, message));
      void queryClient.invalidateQueries({ queryKey: messageKeys.threads });
      onMessageRef.current(message);
    });
    source.addEventListener('receipt.updated', (event) => {
      const receipt = JSON.parse((event as MessageEvent<string>).data) as Receipt;
      queryClient.setQueryData<HistoryData>(messageKeys.history(threadId), (d) => setReceipt(d, receipt));
    });
    return () => source.close();
  }, [threadId, queryClient]);
  return state;
}

// The server's own token rule, so the page and the PHI audit agree on what a mention is.
export { splitMentions } from '../../../../src/modules/direct-messages/mentions.js';

export function formatTime(value: string): string {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return value;
  // Today and the time are the clinic's (its zone, else the device's), as on the calendar.
  return clinicDate(at) === clinicDate()
    ? formatInstant(at, { timeStyle: 'short' })
    : formatInstant(at, { dateStyle: 'medium', timeStyle: 'short' });
}
