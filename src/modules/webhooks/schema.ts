import { z } from 'zod';
import { EVENT_TYPES } from '../../platform/events/events.js';
import { pageQuery } from '../../platform/pagination.js';

/** An event-type filter entry: a kind of §7.2 or `*` (all). */
export const eventFilter = z.enum(['*', ...EVENT_TYPES]);

const events = z
  .array(eventFilter)
  .min(1)
  .max(EVENT_TYPES.length + 1)
  .transform((list) => [...new Set(list)]);

export const createEndpointBody = z.object({
  url: z.string().trim().min(1).max(2000),
  events: events.optional(),
  description: z.string().trim().max(500).optional(),
});
export type CreateEndpointInput = z.infer<typeof createEndpointBody>;

export const patchEndpointBody = z
  .object({
    url: z.string().trim().min(1).max(2000).optional(),
    events: events.optional(),
    description: z.string().trim().max(500).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Send at least one field' });
export type PatchEndpointInput = z.infer<typeof patchEndpointBody>;

export const endpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  enabled: z.boolean(),
  /** While a rotated-out secret still signs (24 h after rotate-secret); null otherwise. */
  previousSecretExpiresAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Endpoint = z.infer<typeof endpointSchema>;

export const createdEndpointSchema = endpointSchema.extend({
  secret: z.string().describe('whsec_ + base64 of 32 random bytes; shown only in this response'),
});

export const rotatedSecretSchema = z.object({
  id: z.string(),
  secret: z.string().describe('The new secret; shown only in this response'),
  previousSecretExpiresAt: z.string(),
});

export const endpointParams = z.object({ id: z.string().min(1).max(100) });
export const replayParams = endpointParams.extend({ event_id: z.string().min(1).max(100) });

export const deliveriesQuery = pageQuery.extend({
  status: z
    .string()
    .regex(/^(success|fail|[1-5]\d\d)$/, 'Use success, fail or an HTTP status such as 500')
    .optional()
    .describe('`success`, `fail`, or an HTTP status code'),
});
export type DeliveriesQuery = z.infer<typeof deliveriesQuery>;

export const attemptSchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  attempt: z.number().int(),
  outcome: z.enum(['success', 'fail']),
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
  attemptedAt: z.string(),
  /** When the next attempt is scheduled after this failure; null after a success or the last retry. */
  nextAttemptAt: z.string().nullable(),
});
export type Attempt = z.infer<typeof attemptSchema>;

export const replayResponse = z.object({ eventId: z.string(), state: z.literal('pending') });

export const testEventResponse = z.object({ eventId: z.string() });

export const deliveryParams = endpointParams.extend({ deliveryId: z.string().min(1).max(100) });

export const deliveryDetailSchema = attemptSchema.extend({
  request: z
    .object({
      url: z.string(),
      headers: z.record(z.string(), z.string()).describe('As sent, signature headers included; never the secret'),
      body: z.string().describe('The exact JSON body that was signed and sent'),
    })
    .nullable()
    .describe('null for attempts recorded before requests were kept'),
  response: z
    .object({
      status: z.number().int(),
      headers: z.record(z.string(), z.string()),
      body: z.string().describe('Cut at 4 KiB'),
      truncated: z.boolean().describe('The receiver sent more than the 4 KiB kept'),
    })
    .nullable()
    .describe('null when no answer came (timeout, refused connection, blocked address)'),
});
export type DeliveryDetail = z.infer<typeof deliveryDetailSchema>;

export const inboxItemSchema = z.object({
  id: z.string(),
  kind: z.string(),
  endpointId: z.string().nullable(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  lastStatus: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  state: z
    .enum(['open', 'replayed', 'resolved'])
    .describe(
      '`open` until an admin handles it: `replayed` (its event was replayed to its endpoint) or `resolved` ' +
        '(dismissed with POST /inbox/:id/resolve)',
    ),
  handledAt: z.string().nullable().describe('When it was replayed or resolved; null while open'),
  handledBy: z
    .string()
    .nullable()
    .describe('The user who replayed or resolved it; null while open, and for items replayed before this was kept'),
  handledByName: z.string().nullable().describe("That user's name, while they are a member of the workspace"),
});
export type InboxItem = z.infer<typeof inboxItemSchema>;

export const inboxQuery = pageQuery.extend({
  state: z
    .enum(['open', 'handled', 'all'])
    .default('all')
    .describe('`open`, `handled` (replayed or resolved) or `all` (the default)'),
});
export type InboxQuery = z.infer<typeof inboxQuery>;

export const inboxItemParams = z.object({ id: z.string().min(1).max(100) });
