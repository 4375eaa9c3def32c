import { z } from 'zod';

/** RFC 9457 problem document; extension members pass through. */
export const problemSchema = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string(),
  requestId: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** Spread into a route's `response` so OpenAPI documents the problem+json errors. */
export const problemResponses = { '4xx': problemSchema, '5xx': problemSchema } as const;

export const idParams = z.object({ id: z.string().min(1).max(100) });
export const noContent = z.null().describe('No content');
