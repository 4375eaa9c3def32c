// The OpenAPI document must say exactly what the service sends: problems are
// application/problem+json, event streams text/event-stream, and a response that can also be sent as
// another media type (a CSV download) lists both (clients are generated from it).
import type { z } from 'zod';

interface MediaObject {
  schema?: { description?: string };
}
interface ResponseObject {
  description?: string;
  content?: Record<string, MediaObject>;
}
interface OperationObject {
  responses?: Record<string, ResponseObject>;
}

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';
export const EVENT_STREAM_MEDIA_TYPE = 'text/event-stream';
export const CSV_MEDIA_TYPE = 'text/csv';

/** Schema member naming the other media types one success response may be sent as (removed from the document). */
const ALSO_AS = 'x-also-as';

/**
 * Marks a JSON response schema as also sent as other media types (e.g. a CSV download chosen by
 * `Accept`): the document then lists both under the one status, the other as a string.
 */
export function alsoDocumentedAs<T extends z.ZodType>(schema: T, mediaType: string, description: string): T {
  return schema.meta({ [ALSO_AS]: { [mediaType]: description } }) as T;
}

/** Schema member naming the one media type a success response is sent as, when it is not JSON. */
const SENT_AS = 'x-sent-as';

/** A success response sent as another media type than JSON (a provider's handshake text, TwiML). */
export function sentAs<T extends z.ZodType>(schema: T, mediaType: string): T {
  return schema.meta({ [SENT_AS]: mediaType }) as T;
}

/** Schema member documenting a request body that the route reads itself (moved to `requestBody`). */
export const READS_BODY = 'x-reads-body';

/** One media type of a body a route reads itself: what it is, and a permissive schema for it. */
export interface ReadBodyMedia {
  description: string;
  schema: Record<string, unknown>;
}

/**
 * Documents the request body of a route that reads the bytes itself (a signature over the exact bytes,
 * a raw message): spread into the route's `schema`. Only the OpenAPI document gets a `requestBody`
 * with these media types; Fastify compiles no body schema from it, so the bytes reach the route
 * exactly as received (nothing validated, coerced or stripped).
 */
export function readsBody(content: Record<string, ReadBodyMedia>): { [READS_BODY]: Record<string, ReadBodyMedia> } {
  return { [READS_BODY]: content };
}

function isErrorStatus(status: string): boolean {
  return /^[45]/.test(status);
}

function renameContent(response: ResponseObject, to: string): void {
  if (!response.content) return;
  const media = Object.values(response.content)[0];
  if (media) response.content = { [to]: media };
}

/** Rewrites every operation's response media types in place; returns the document. */
export function documentMediaTypes<T extends { paths?: Record<string, Record<string, unknown>> }>(document: T): T {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const operation of Object.values(item) as OperationObject[]) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      // An emulator answers as the provider it stands in for: its statuses and error bodies, not ours.
      if (path.startsWith('/_emulators/') && !operation.responses.default) {
        operation.responses.default = {
          description:
            "The emulated provider's own answer to anything else (its status codes and error bodies, as the real " +
            'provider sends them; not problem+json)',
        } as ResponseObject;
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const declared = response.content ? Object.values(response.content)[0] : undefined;
        const sentAsType = (declared?.schema as Record<string, unknown> | undefined)?.[SENT_AS];
        if (isErrorStatus(status) && typeof sentAsType !== 'string') {
          renameContent(response, PROBLEM_MEDIA_TYPE);
          continue;
        }
        const media = response.content ? Object.values(response.content)[0] : undefined;
        const also = (media?.schema as Record<string, unknown> | undefined)?.[ALSO_AS] as
          | Record<string, string>
          | undefined;
        if (media?.schema && also && response.content) {
          delete (media.schema as Record<string, unknown>)[ALSO_AS];
          for (const [type, description] of Object.entries(also)) {
            response.content[type] = { schema: { type: 'string', description } as MediaObject['schema'] };
          }
        }
        const sent = (media?.schema as Record<string, unknown> | undefined)?.[SENT_AS];
        if (media?.schema && typeof sent === 'string') {
          delete (media.schema as Record<string, unknown>)[SENT_AS];
          renameContent(response, sent);
        }
        if (media?.schema?.description === EVENT_STREAM_MEDIA_TYPE) {
          renameContent(response, EVENT_STREAM_MEDIA_TYPE);
          media.schema.description = 'Server-Sent Events stream';
        }
      }
    }
  }
  return document;
}
