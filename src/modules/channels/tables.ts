import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** A workspace's account at one provider (contract §8): credentials sealed with the secret box. */
export const channelConnections = pgTable(
  'channel_connections',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    channel: text('channel').notNull(),
    name: text('name').notNull(),
    credentialsEnc: text('credentials_enc').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** Disconnected: its webhooks answer 401 from then on; the conversations stay. */
    deletedAt: ts('deleted_at'),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

/** Someone who wrote to a connection (per channel external id), optionally linked to a patient. */
export const channelContacts = pgTable(
  'channel_contacts',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    connectionId: text('connection_id').notNull(),
    channel: text('channel').notNull(),
    externalId: text('external_id').notNull(),
    name: text('name'),
    phone: text('phone'),
    patientId: text('patient_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /**
     * When the provider last refused to tell this contact's name (Messenger, Instagram: a token it does not
     * accept, the person's privacy): not asked again for 30 days (`channels.contact-profile`).
     */
    nameRefusedAt: ts('name_refused_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('channel_contacts_external_idx').on(t.workspaceId, t.connectionId, t.externalId),
    index('channel_contacts_patient_idx').on(t.workspaceId, t.patientId),
  ],
);

/** One conversation per contact: the inbox's rows. */
export const channelConversations = pgTable(
  'channel_conversations',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    connectionId: text('connection_id').notNull(),
    channel: text('channel').notNull(),
    contactId: text('contact_id').notNull(),
    lastMessageText: text('last_message_text'),
    lastMessageAt: ts('last_message_at'),
    unreadCount: integer('unread_count').notNull().default(0),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('channel_conversations_contact_idx').on(t.workspaceId, t.contactId),
    index('channel_conversations_updated_idx').on(t.workspaceId, t.updatedAt),
    // The unread conversations (the badge every open app polls).
    index('channel_conversations_unread_idx').on(t.workspaceId, t.updatedAt, t.id).where(sql`unread_count > 0`),
  ],
);

/**
 * Messages in and out. An inbound message is stored once: `dedup_key` (the provider's message or
 * update id) is unique per connection, so a provider's retry, even concurrent ones, stores nothing new.
 */
export const channelMessages = pgTable(
  'channel_messages',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    conversationId: text('conversation_id').notNull(),
    connectionId: text('connection_id').notNull(),
    channel: text('channel').notNull(),
    direction: text('direction', { enum: ['in', 'out'] }).notNull(),
    providerMessageId: text('provider_message_id'),
    dedupKey: text('dedup_key'),
    text: text('text').notNull(),
    attachments: jsonb('attachments').notNull().default(sql`'[]'::jsonb`),
    status: text('status', { enum: ['received', 'sending', 'sent', 'delivered', 'read', 'failed'] }).notNull(),
    error: text('error'),
    sentBy: text('sent_by'),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('channel_messages_dedup_idx').on(t.workspaceId, t.connectionId, t.dedupKey),
    index('channel_messages_conversation_idx').on(t.workspaceId, t.conversationId, t.at),
    index('channel_messages_provider_idx').on(t.workspaceId, t.connectionId, t.providerMessageId),
    // GET /channels/messages across conversations, newest first.
    index('channel_messages_at_idx').on(t.workspaceId, t.at, t.id),
  ],
);

/**
 * Delivery reports that came before we knew the provider's id of our reply (the send's answer was still on
 * its way): kept briefly per connection and provider id, applied in the transaction that stores the id, and
 * pruned after an hour (a report about a message never sent from here, e.g. from another tool on the number).
 */
export const channelPendingStatuses = pgTable(
  'channel_pending_statuses',
  {
    workspaceId: text('workspace_id').notNull(),
    connectionId: text('connection_id').notNull(),
    providerMessageId: text('provider_message_id').notNull(),
    status: text('status', { enum: ['sent', 'delivered', 'read', 'failed'] }).notNull(),
    error: text('error'),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({
      name: 'channel_pending_statuses_pk',
      columns: [t.workspaceId, t.connectionId, t.providerMessageId, t.status],
    }),
    index('channel_pending_statuses_received_idx').on(t.receivedAt),
  ],
);
