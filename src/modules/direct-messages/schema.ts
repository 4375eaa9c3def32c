import { z } from 'zod';
import { MAX_LIMIT } from '../../platform/pagination.js';

export const MAX_BODY_CHARS = 10_000;
export const MAX_RECIPIENTS = 50;

const id = z.string().min(1).max(100);

/** 1–10,000 characters (Unicode code points), not only whitespace. */
export const messageBody = z
  .string()
  .refine((s) => s.trim().length > 0, { message: 'The message is empty' })
  .refine((s) => [...s].length <= MAX_BODY_CHARS, { message: `At most ${MAX_BODY_CHARS} characters` });

export const mentionSchema = z.object({
  type: z.literal('patient'),
  patientId: z.string(),
  /** The patient's display name at read time (null when the patient no longer exists). */
  displayName: z.string().nullable(),
});

export const messageSchema = z.object({
  id: z.string(),
  threadId: z.string(),
  senderId: z.string(),
  body: z.string(),
  mentions: z.array(mentionSchema),
  createdAt: z.string(),
});
export type Message = z.infer<typeof messageSchema>;

export const participantSchema = z.object({
  userId: z.string(),
  name: z.string(),
  /**
   * No longer a member of the workspace (removed): they stay in the thread under their name, but read nothing
   * more; once no one else in it is a member, sending there is 409 `recipients_left`.
   */
  former: z.boolean(),
});

export const threadSchema = z.object({
  id: z.string(),
  kind: z.enum(['direct', 'group']),
  /**
   * Display title for the caller: the group's title, else the other participants' names, a former member's
   * followed by "(no longer a member)".
   */
  title: z.string(),
  /** The title given at creation (groups only), or null. */
  customTitle: z.string().nullable(),
  participants: z.array(participantSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Thread = z.infer<typeof threadSchema>;

export const threadListItem = threadSchema.extend({
  lastMessage: messageSchema.nullable(),
  unreadCount: z.number().int(),
});
export type ThreadListItem = z.infer<typeof threadListItem>;

export const receiptSchema = z.object({
  userId: z.string(),
  lastReadMessageId: z.string().nullable(),
  readAt: z.string().nullable(),
});
export type Receipt = z.infer<typeof receiptSchema>;

export const sendBody = z
  .object({
    recipients: z.array(id).min(1).max(MAX_RECIPIENTS).optional(),
    threadId: id.optional(),
    body: messageBody,
    title: z.string().trim().min(1).max(200).optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.recipients === undefined) === (b.threadId === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['recipients'], message: 'Send either recipients or threadId' });
    }
    if (b.threadId !== undefined && b.title !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['title'], message: 'title only applies to a new group' });
    }
  });
export type SendInput = z.infer<typeof sendBody>;

export const sendInThreadBody = z.object({ body: messageBody }).strict();

export const sendResponse = z.object({ threadId: z.string(), message: messageSchema });
export const sendInThreadResponse = z.object({ message: messageSchema });

export const threadParams = z.object({ threadId: id });

export const listThreadsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  cursor: z.string().max(500).optional(),
});

export const historyQuery = z.object({
  /** The `nextCursor` of the previous page, or a message id: older messages than that. */
  before: z.string().max(500).optional(),
  /** Alias of `before` (the list convention's name). */
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
});

export const historyResponse = z.object({
  thread: threadSchema,
  items: z.array(messageSchema),
  nextCursor: z.string().nullable(),
  receipts: z.array(receiptSchema),
});

export const markReadBody = z
  .object({
    read: z.literal(true),
    lastReadMessageId: id.optional(),
  })
  .strict();

export const searchQuery = z.object({
  q: z.string().trim().min(1).max(200),
  /** Only threads this user takes part in (messages they sent or received). */
  userId: id.optional(),
  /** Only messages this user sent. */
  senderId: id.optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  cursor: z.string().max(500).optional(),
});
export type SearchQuery = z.infer<typeof searchQuery>;

export const searchHit = z.object({
  message: messageSchema,
  thread: threadSchema,
  snippet: z
    .string()
    .describe(
      'Up to two excerpts of the body (joined by " … "), each patient mention written as `@` and the patient\'s ' +
        'name, with every character of the text kept: `&`, `<`, `>`, `"` ' +
        "and `'` as `&amp;` `&lt;` `&gt;` `&quot;` `&#39;`, and the matches wrapped in `<mark>…</mark>`, the only markup. " +
        'Undo those five entities to get the text back; never insert it as HTML.',
    ),
  rank: z.number(),
});

export const searchResponse = z.object({
  items: z.array(searchHit),
  nextCursor: z.string().nullable(),
  truncated: z
    .boolean()
    .describe(
      'True when the term matches more messages than are ranked (the newest 300): older matches are not in the ' +
        'results; narrow the search (a phrase, `senderId`, `userId`) to reach them.',
    ),
});
