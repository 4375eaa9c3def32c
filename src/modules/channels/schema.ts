import { z } from 'zod';
import { pageQuery } from '../../platform/pagination.js';
import { CHANNELS } from './providers/types.js';

export const channelSchema = z.enum(CHANNELS);
const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'Must not contain NUL characters');

export const connectBody = z.object({
  channel: channelSchema,
  name: text(100).trim().min(1),
  credentials: z.record(z.string().max(50), z.string().max(2000)).describe('Per channel, as contract §8 lists'),
});

export const connectionSchema = z.object({
  id: z.string(),
  channel: channelSchema,
  name: z.string(),
  webhookUrl: z.string().describe('Paste into the provider’s console (Telegram is registered for you)'),
  createdAt: z.string(),
});

export const conversationSchema = z.object({
  id: z.string(),
  channel: channelSchema,
  connectionId: z.string(),
  contact: z.object({
    id: z.string(),
    externalId: z.string(),
    name: z.string().nullable(),
    phone: z.string().nullable(),
    patientId: z.string().nullable(),
    patientName: z
      .string()
      .nullable()
      .describe('The linked patient’s name (given and family), shown instead of the channel’s name or number'),
  }),
  lastMessage: z
    .object({
      text: z
        .string()
        .describe(
          'Preview: the text, else the first attachment’s kind in words (`[Voice message]`); at most 200 characters',
        ),
      at: z.string(),
      direction: z.enum(['in', 'out']),
      status: z
        .enum(['received', 'sending', 'sent', 'delivered', 'read', 'failed'])
        .describe('`failed` on an outbound message: the conversation’s last reply did not reach the patient'),
    })
    .nullable()
    .describe('The conversation’s newest message'),
  unreadCount: z.number().int(),
  updatedAt: z.string(),
});

export const messageSchema = z.object({
  id: z.string(),
  conversationId: z.string(),
  channel: channelSchema,
  direction: z.enum(['in', 'out']),
  providerMessageId: z.string().nullable().describe('The provider’s id exactly (Viber’s tokens exceed 2^53)'),
  text: z.string(),
  attachments: z.array(
    z.object({
      type: z.string(),
      url: z.string().optional(),
      mimeType: z.string().optional(),
      name: z.string().optional(),
    }),
  ),
  status: z.enum(['received', 'sending', 'sent', 'delivered', 'read', 'failed']),
  error: z.string().nullable(),
  at: z.string(),
});

const id = z.string().min(1).max(100);
/** Unread patient conversations, counts only: no names and no text (the navigation's badge reads it unaudited). */
export const unreadSchema = z.object({
  total: z.number().int().describe('Unread messages over every conversation (not only the items listed)'),
  conversations: z
    .number()
    .int()
    .describe('Conversations with unread messages, all of them (not only the items listed)'),
  items: z
    .array(
      z.object({
        conversationId: z.string(),
        channel: channelSchema,
        unreadCount: z.number().int(),
        updatedAt: z.string(),
      }),
    )
    .describe('The conversations with unread messages, most recent first (at most 200)'),
  nextCursor: z.null(),
});

export const conversationsQuery = pageQuery.extend({ channel: channelSchema.optional(), patientId: id.optional() });
export const messagesQuery = pageQuery.extend({ conversationId: id.optional(), channel: channelSchema.optional() });
export const replyBody = z.object({ text: text(4000).trim().min(1) });
export const linkBody = z.object({ patientId: id.nullable() });
// Any `connection` value is taken (a URL is bounded anyway): one that names no connection is the
// contract's unknown connection, 401 (403 for the handshake), not a 400.
export const webhookQuery = z.object({
  connection: z.string().optional(),
  message: z
    .string()
    .max(100)
    .optional()
    .describe('Our id of the reply a status report is about (set by us in Twilio’s per-message StatusCallback URL)'),
});
export const handshakeQuery = z.object({
  connection: z.string().optional(),
  'hub.mode': z.string().max(50).optional(),
  'hub.verify_token': z.string().max(500).optional(),
  'hub.challenge': z.string().max(500).optional(),
});
