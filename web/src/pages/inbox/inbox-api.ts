/** The channels inbox (contract §8): conversations, messages, replies, links, live updates. */
import { type QueryClient, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import { explainFailure as explainProviderFailure } from '../../../../src/modules/channels/providers/content.js';
// The server's own list and names (types.ts imports nothing at run time).
import { CHANNEL_LABEL, CHANNELS, type ChannelName } from '../../../../src/modules/channels/providers/types.js';
import { ApiError, api, apiRequest, openEventStream, type Page } from '../../api.js';
import { formatPhone } from '../../phone.js';

export type Channel = ChannelName;
export { CHANNEL_LABEL };
export const CHANNEL_LIST: Channel[] = [...CHANNELS];

export interface Conversation {
  id: string;
  channel: Channel;
  connectionId: string;
  contact: {
    id: string;
    externalId: string;
    name: string | null;
    phone: string | null;
    patientId: string | null;
    /** The linked patient's name: the contact is shown by it. */
    patientName: string | null;
  };
  lastMessage: { text: string; at: string; direction: 'in' | 'out'; status: InboxMessage['status'] } | null;
  unreadCount: number;
  updatedAt: string;
}

export interface InboxMessage {
  id: string;
  conversationId: string;
  channel: Channel;
  direction: 'in' | 'out';
  providerMessageId: string | null;
  text: string;
  attachments: { type: string; url?: string; mimeType?: string; name?: string }[];
  status: 'received' | 'sending' | 'sent' | 'delivered' | 'read' | 'failed';
  error: string | null;
  at: string;
}

export interface ChannelConnection {
  id: string;
  channel: Channel;
  name: string;
  webhookUrl: string;
  createdAt: string;
}

const KEY = ['channels'] as const;
export const inboxKeys = {
  all: KEY,
  conversations: (filter: { channel?: Channel; patientId?: string }) => [...KEY, 'conversations', filter] as const,
  conversation: (id: string) => [...KEY, 'conversation', id] as const,
  messages: (conversationId: string) => [...KEY, 'messages', conversationId] as const,
  connections: [...KEY, 'connections'] as const,
};

/** Who a conversation is with: the linked patient's name, else the channel's name or number. */
export const contactName = (c: Conversation['contact']) =>
  c.patientName ?? c.name ?? (c.phone ? formatPhone(c.phone) : c.externalId);

/** What else identifies the contact (their number, or the name they use on the channel), if not already the name. */
export function contactDetail(c: Conversation['contact']): string | null {
  const shown = contactName(c);
  const detail = [c.phone ? formatPhone(c.phone) : null, c.patientName ? c.name : null].filter(
    (d): d is string => !!d && d !== shown,
  );
  return detail.length ? detail.join(' · ') : null;
}

/** The conversation's last message is a reply that did not reach the patient. */
export const lastReplyFailed = (c: Conversation) =>
  c.lastMessage?.direction === 'out' && c.lastMessage.status === 'failed';

/** Conversations and messages are read a page at a time (the API's cursor), newest first. */
export const CONVERSATIONS_PAGE = 100;
export const MESSAGES_PAGE = 100;

/** The pages loaded so far as one list, each item once (a page fetched while the order moved may repeat one). */
export function loadedItems<T extends { id: string }>(data: { pages: readonly Page<T>[] } | undefined): T[] {
  const seen = new Set<string>();
  const items: T[] = [];
  for (const page of data?.pages ?? [])
    for (const item of page.items)
      if (!seen.has(item.id)) {
        seen.add(item.id);
        items.push(item);
      }
  return items;
}

/**
 * The inbox's conversations, most recent first, a page at a time (*Load more conversations*). A change
 * announced on the event stream refetches every page loaded, from the first, so the order stays right
 * (changes are gathered over a quarter second first, so a burst costs a few reads).
 */
export const useConversations = (
  filter: { channel?: Channel; patientId?: string },
  options: { enabled?: boolean } = {},
) =>
  useInfiniteQuery({
    queryKey: inboxKeys.conversations(filter),
    queryFn: ({ pageParam, signal }) =>
      api.get<Page<Conversation>>(
        '/channels/conversations',
        { ...filter, limit: CONVERSATIONS_PAGE, cursor: pageParam },
        signal,
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    enabled: options.enabled ?? true,
    // Live updates come over the event stream; this only catches up if the stream cannot be held.
    refetchInterval: 60_000,
  });

/** One conversation by id: a link (`/inbox?c=`) to one not among the pages loaded. */
export const useConversation = (id: string | undefined, options: { enabled?: boolean } = {}) =>
  useQuery({
    queryKey: inboxKeys.conversation(id ?? ''),
    queryFn: ({ signal }) =>
      api.get<Conversation>(`/channels/conversations/${encodeURIComponent(id ?? '')}`, undefined, signal),
    enabled: !!id && (options.enabled ?? true),
    // A conversation that is not there stays not there: no retries before saying so.
    retry: (count, error) => !(error instanceof ApiError && error.status === 404) && count < 3,
  });

export interface UnreadSummary {
  /** Unread messages over every conversation (the list below is the newest 200 only). */
  total: number;
  /** Conversations with unread messages, all of them. */
  conversations: number;
  items: { conversationId: string; channel: Channel; unreadCount: number; updatedAt: string }[];
}

/**
 * The inbox's unread counts for the navigation on every page: ids and counts only (no names, no
 * text), so the badge reads no patient's information; kept live by the same event stream.
 */
export const useUnreadSummary = (options: { enabled?: boolean } = {}) =>
  useQuery({
    queryKey: [...KEY, 'unread'] as const,
    queryFn: ({ signal }) => api.get<UnreadSummary>('/channels/unread', undefined, signal),
    enabled: options.enabled ?? true,
    refetchInterval: 60_000,
  });

/** A conversation's messages, newest page first; older pages on demand (*Load older messages*). */
export const useConversationMessages = (conversationId: string) =>
  useInfiniteQuery({
    queryKey: inboxKeys.messages(conversationId),
    queryFn: ({ pageParam, signal }) =>
      api.get<Page<InboxMessage>>(
        '/channels/messages',
        { conversationId, limit: MESSAGES_PAGE, cursor: pageParam },
        signal,
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });

export function useReply(conversationId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (text: string) =>
      apiRequest<InboxMessage>(`/channels/conversations/${encodeURIComponent(conversationId)}/messages`, {
        method: 'POST',
        body: { text },
      }),
    onSettled: () => client.invalidateQueries({ queryKey: KEY }),
  });
}

export function useMarkConversationRead() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (conversationId: string) =>
      apiRequest<void>(`/channels/conversations/${encodeURIComponent(conversationId)}/read`, { method: 'POST' }),
    onSuccess: (_done, conversationId) =>
      Promise.all([
        client.invalidateQueries({ queryKey: [...KEY, 'conversations'] }),
        client.invalidateQueries({ queryKey: inboxKeys.conversation(conversationId) }),
      ]),
  });
}

export function useLinkContact() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { contactId: string; patientId: string | null }) =>
      apiRequest<{ id: string; patientId: string | null }>(
        `/channels/contacts/${encodeURIComponent(input.contactId)}/patient`,
        { method: 'PUT', body: { patientId: input.patientId } },
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: KEY }),
  });
}

export const useConnections = (enabled: boolean) =>
  useQuery({
    queryKey: inboxKeys.connections,
    enabled,
    queryFn: ({ signal }) => api.get<Page<ChannelConnection>>('/channels', undefined, signal),
  });

export function useConnectChannel() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { channel: Channel; name: string; credentials: Record<string, string> }) =>
      apiRequest<ChannelConnection>('/channels', { method: 'POST', body: input }),
    onSuccess: () => client.invalidateQueries({ queryKey: inboxKeys.connections }),
  });
}

export function useDisconnectChannel() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiRequest<void>(`/channels/${encodeURIComponent(id)}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: KEY }),
  });
}

export type InboxStreamState = 'connecting' | 'live' | 'reconnecting';

/** How long live changes are gathered before the inbox's lists are read again. */
const LIVE_COALESCE_MS = 250;
/** The longest one round of refreshes holds up the next. */
const LIVE_ROUND_MAX_MS = 5_000;

/** The conversation a `conversation.updated` event names; `null` when it names none we can read. */
function conversationOf(event: Event): string | null {
  try {
    const id = (JSON.parse((event as MessageEvent<string>).data) as { conversationId?: unknown }).conversationId;
    return typeof id === 'string' && id.length > 0 ? id : null;
  } catch {
    return null;
  }
}

/**
 * One event stream per browser tab, shared by whoever needs it (the navigation's unread counts on
 * every page, the Inbox page's own view): a change to a conversation refreshes the lists, the unread
 * counts and that conversation's thread (gathered over a quarter second). Opened while someone uses it, closed when the last one lets go; a new workspace reopens it.
 */
class InboxStream {
  private source: EventSource | null = null;
  private workspaceId: string | null = null;
  private users = 0;
  private state: InboxStreamState = 'connecting';
  private readonly listeners = new Set<() => void>();
  private readonly pending = new Set<string>();
  private everything = false;
  private refreshing = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly client: QueryClient) {}

  readonly subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = () => this.state;

  acquire(workspaceId: string): () => void {
    this.users += 1;
    if (!this.source || this.workspaceId !== workspaceId) this.open(workspaceId);
    return () => {
      this.users -= 1;
      if (this.users === 0) this.close();
    };
  }

  private open(workspaceId: string) {
    this.close();
    this.workspaceId = workspaceId;
    // For this workspace: a switch in another tab ends it, and its reconnect is refused (not the other's stream).
    const source = openEventStream('/channels/events');
    this.source = source;
    source.onopen = () => {
      // Back after a break: what changed meanwhile was not announced.
      if (this.state === 'reconnecting') void this.client.invalidateQueries({ queryKey: KEY });
      this.setState('live');
    };
    source.onerror = () => this.setState('reconnecting');
    source.addEventListener('conversation.updated', (event) => this.changed(conversationOf(event)));
  }

  /**
   * Changes are gathered for a moment and refreshed together: a burst of messages (a busy morning, a
   * provider delivering a backlog) costs every open tab a few list reads, not one per message. Only what
   * the change can touch is refreshed: the conversation lists, the unread counts, and the named
   * conversations' threads (the channel connections never).
   */
  private changed(conversationId: string | null) {
    if (conversationId === null) this.everything = true;
    else this.pending.add(conversationId);
    if (!this.refreshing) this.timer ??= setTimeout(this.flush, LIVE_COALESCE_MS);
  }

  /** Refreshes what the gathered changes touch; what changes meanwhile waits for the next round. */
  private readonly flush = async () => {
    this.timer = null;
    const ids = [...this.pending];
    const everything = this.everything;
    this.pending.clear();
    this.everything = false;
    const refreshes = everything
      ? [this.client.invalidateQueries({ queryKey: KEY })]
      : [
          this.client.invalidateQueries({ queryKey: [...KEY, 'conversations'] }),
          this.client.invalidateQueries({ queryKey: [...KEY, 'unread'] }),
          ...ids.flatMap((id) => [
            this.client.invalidateQueries({ queryKey: inboxKeys.messages(id) }),
            this.client.invalidateQueries({ queryKey: inboxKeys.conversation(id) }),
          ]),
        ];
    // One round of reads at a time (a slow server is not sent more while it answers), but never held
    // up for long by one read that does not come back.
    this.refreshing = true;
    await Promise.race([Promise.allSettled(refreshes), new Promise((done) => setTimeout(done, LIVE_ROUND_MAX_MS))]);
    this.refreshing = false;
    if ((this.pending.size > 0 || this.everything) && this.source)
      this.timer ??= setTimeout(this.flush, LIVE_COALESCE_MS);
  };

  private close() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
    this.everything = false;
    this.source?.close();
    this.source = null;
    this.workspaceId = null;
    this.setState('connecting');
  }

  private setState(state: InboxStreamState) {
    if (state === this.state) return;
    this.state = state;
    for (const listener of this.listeners) listener();
  }
}

const streams = new WeakMap<QueryClient, InboxStream>();

/** Live updates of the workspace's inbox (off for a plan without channels). */
export function useInboxEvents(workspaceId: string, enabled = true): InboxStreamState {
  const client = useQueryClient();
  let stream = streams.get(client);
  if (!stream) {
    stream = new InboxStream(client);
    streams.set(client, stream);
  }
  const shared = stream;
  useEffect(() => (enabled ? shared.acquire(workspaceId) : undefined), [shared, workspaceId, enabled]);
  return useSyncExternalStore(shared.subscribe, shared.getState);
}

export const STATUS_LABEL: Record<InboxMessage['status'], string> = {
  received: 'Received',
  sending: 'Sending…',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  failed: 'Not delivered',
};

/**
 * A failed reply in plain words a receptionist can act on (the provider's words and codes are kept for the
 * details), and whether Retry could help (not when the patient blocked the clinic or the number cannot
 * receive it). The server's own explanation (`providers/content.ts`), shared so both say the same.
 */
export const explainFailure = (error: string | null, channel: Channel) => explainProviderFailure(channel, error);

export const failureSummary = (error: string | null, channel: Channel): string =>
  explainProviderFailure(channel, error).summary;
