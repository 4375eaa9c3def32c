// The OpenAPI document must say exactly what the service sends: problems are
// application/problem+json, event streams text/event-stream (clients are generated from it).

interface MediaObject {
  schema?: { description?: string };
}
interface ResponseObject {
  content?: Record<string, MediaObject>;
}
interface OperationObject {
  responses?: Record<string, ResponseObject>;
}

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';
export const EVENT_STREAM_MEDIA_TYPE = 'text/event-stream';

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
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item) as OperationObject[]) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (isErrorStatus(status)) {
          renameContent(response, PROBLEM_MEDIA_TYPE);
          continue;
        }
        const media = response.content ? Object.values(response.content)[0] : undefined;
        if (media?.schema?.description === EVENT_STREAM_MEDIA_TYPE) {
          renameContent(response, EVENT_STREAM_MEDIA_TYPE);
          delete media.schema.description;
          (media.schema as Record<string, unknown>).description = 'Server-Sent Events stream';
        }
      }
    }
  }
  return document;
}
