/** Marketplace and assistant API calls with their TanStack Query hooks. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { SkillManifest as Manifest } from '../../../../packages/skill-sdk/src/manifest.js';
import { api } from '../../api.js';

// The Skill SDK's manifest types (type-only: nothing of the SDK is bundled).
export type {
  ScopeDeclaration,
  SkillManifest as Manifest,
  ToolDefinition as Tool,
} from '../../../../packages/skill-sdk/src/manifest.js';

export interface CatalogItem extends Manifest {
  installed: boolean;
  installedVersion: string | null;
}

export interface Install {
  slug: string;
  skillId: string;
  version: string;
  grantedScopes: string[];
  status: 'active' | 'uninstalled';
  installedAt: string;
  installedBy: string;
  updateAvailable: boolean;
  latestVersion: string;
  newScopes: string[];
}

export interface ModuleDetail extends CatalogItem {
  content: string;
  contentSummary: string;
  install: Install | null;
  source: 'builtin' | 'private';
}

export interface Installed {
  items: Install[];
  activeCount: number;
  limit: number | null;
  tier: string;
}

export interface ChatToolCall {
  slug: string;
  tool: string;
  input: unknown;
  outcome: 'ok' | 'denied' | 'error';
  result?: unknown;
  error?: { code: string; detail: string };
  /** What the call did and its outcome, in plain words (no tool names, no ids). */
  label: string;
  summary: string;
}

export interface ChatAnswer {
  message: { role: 'assistant'; content: string };
  toolCalls: ChatToolCall[];
  model: { provider: string; name: string; offline: boolean };
}

export const marketplaceKeys = {
  all: ['marketplace'] as const,
  catalog: (q: string, category: string) => ['marketplace', 'catalog', q, category] as const,
  module: (slug: string) => ['marketplace', 'module', slug] as const,
  installed: ['marketplace', 'installed'] as const,
};

export function useCatalog(q: string, category: string) {
  return useQuery({
    queryKey: marketplaceKeys.catalog(q, category),
    queryFn: ({ signal }) => api.get<{ items: CatalogItem[] }>('/marketplace/catalog', { q, category }, signal),
  });
}

export function useModule(slug: string | null) {
  return useQuery({
    queryKey: marketplaceKeys.module(slug ?? ''),
    queryFn: ({ signal }) =>
      api.get<ModuleDetail>(`/marketplace/module/${encodeURIComponent(slug ?? '')}`, undefined, signal),
    enabled: !!slug,
  });
}

export function useInstalled() {
  return useQuery({
    queryKey: marketplaceKeys.installed,
    queryFn: ({ signal }) => api.get<Installed>('/marketplace/installed', undefined, signal),
  });
}

export function useInstall() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { slug: string; scopes: string[] }) =>
      api.post<{ install: Install }>('/marketplace/install', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: marketplaceKeys.all }),
  });
}

export function useUninstall() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (slug: string) => api.post<{ install: Install }>('/marketplace/uninstall', { slug }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: marketplaceKeys.all }),
  });
}

export interface ConversationSummary {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
}

export interface ConversationTurn {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  toolCalls: { label: string; summary: string; outcome: 'ok' | 'denied' | 'error' }[];
  /** Answered by the emulators' offline model (an assistant turn). */
  offline: boolean;
  createdAt: string;
}

const conversationKeys = {
  list: ['assistant', 'conversations'] as const,
  one: (id: string) => ['assistant', 'conversation', id] as const,
};

export function useConversations() {
  return useQuery({
    queryKey: conversationKeys.list,
    queryFn: ({ signal }) => api.get<{ items: ConversationSummary[] }>('/chat/conversations', undefined, signal),
  });
}

export function useConversation(id: string | null) {
  return useQuery({
    queryKey: conversationKeys.one(id ?? ''),
    enabled: id !== null,
    queryFn: ({ signal }) =>
      api.get<ConversationSummary & { messages: ConversationTurn[] }>(
        `/chat/conversations/${encodeURIComponent(id ?? '')}`,
        undefined,
        signal,
      ),
  });
}

/** Sends one message: starts a conversation when `conversationId` is null, else continues it. */
export function useSendToAssistant() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ conversationId, content }: { conversationId: string | null; content: string }) =>
      conversationId
        ? api.post<ChatAnswer & { conversation: { id: string; title: string } }>(
            `/chat/conversations/${encodeURIComponent(conversationId)}/messages`,
            { content },
          )
        : api.post<ChatAnswer & { conversation: { id: string; title: string } }>('/chat/conversations', { content }),
    onSuccess: async (answer) => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: conversationKeys.list }),
        queryClient.invalidateQueries({ queryKey: conversationKeys.one(answer.conversation.id) }),
      ]);
    },
  });
}
