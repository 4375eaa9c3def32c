/** The channels inbox (contract §8): conversations, messages, replies, links, live updates. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
// The server's own list and names (types.ts imports nothing at run time).
import { CHANNEL_LABEL, CHANNELS, type ChannelName } from '../../../../src/modules/channels/providers/types.js';
import { API_BASE, api, apiRequest, type Page } from '../../api.js';

export type Channel = ChannelName;
export { CHANNEL_LABEL };
export const CHANNEL_LIST: Channel[] = [...CHANNELS];

export interface Conversation {
  id: string;
  channel: Channel;
  connectionId: string;
  contact: { id: string; externalId: string; name: string | null; phone: string | null; patientId: string | null };
  lastMessage: { text: string; at: string } | null;
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
  messages: (conversationId: string) => [...KEY, 'messages', conversationId] as const,
  connections: [...KEY, 'connections'] as const,
};

export const contactName = (c: Conversation['contact']) => c.name ?? c.phone ?? c.externalId;

export const useConversations = (filter: { channel?: Channel; patientId?: string }) =>
  useQuery({
    queryKey: inboxKeys.conversations(filter),
    queryFn: ({ signal }) => api.get<Page<Conversation>>('/channels/conversations', { ...filter, limit: 100 }, signal),
  });

export const useConversationMessages = (conversationId: string) =>
  useQuery({
    queryKey: inboxKeys.messages(conversationId),
    queryFn: ({ signal }) => api.get<Page<InboxMessage>>('/channels/messages', { conversationId, limit: 100 }, signal),
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
    onSuccess: () => client.invalidateQueries({ queryKey: [...KEY, 'conversations'] }),
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

/** Live updates: every change to a conversation refreshes the inbox's queries. */
export function useInboxEvents(): InboxStreamState {
  const client = useQueryClient();
  const [state, setState] = useState<InboxStreamState>('connecting');
  useEffect(() => {
    const source = new EventSource(`${API_BASE}/channels/events`);
    source.onopen = () => setState('live');
    source.onerror = () => setState('reconnecting');
    source.addEventListener('conversation.updated', () => {
      void client.invalidateQueries({ queryKey: KEY });
    });
    return () => source.close();
  }, [client]);
  return state;
}

export const STATUS_LABEL: Record<InboxMessage['status'], string> = {
  received: 'Received',
  sending: 'Sending…',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  failed: 'Not delivered',
};
