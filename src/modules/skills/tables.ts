import { boolean, index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** One assistant conversation of one user in one workspace (only that user reads it). */
export const assistantConversations = pgTable(
  'assistant_conversations',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    userId: text('user_id').notNull(),
    title: text('title').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('assistant_conversations_user_idx').on(t.workspaceId, t.userId, t.updatedAt),
  ],
);

/** The turns of a conversation; an assistant turn keeps its tool-call cards (label, summary, outcome). */
export const assistantMessages = pgTable(
  'assistant_messages',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    conversationId: text('conversation_id').notNull(),
    role: text('role', { enum: ['user', 'assistant'] }).notNull(),
    content: text('content').notNull(),
    toolCalls: jsonb('tool_calls').$type<{ label: string; summary: string; outcome: string }[]>().notNull().default([]),
    // An assistant turn answered by the offline model (migration 0045).
    offlineModel: boolean('offline_model').notNull().default(false),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('assistant_messages_conversation_idx').on(t.workspaceId, t.conversationId, t.id),
  ],
);
