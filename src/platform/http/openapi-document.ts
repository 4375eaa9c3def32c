// The OpenAPI document's headers and raw request bodies, derived from what the service really does
// (clients are generated from the document): `Idempotency-Key` on exactly the operations whose route
// honours it (the same predicate the runtime asks), `X-Atrium-Workspace` (one shared parameter) on every
// operation whose authentication compares it, `X-Request-Id` on every response (set by a hook on
// every reply, streams included), `Retry-After` where the error handling sends it, and the request
// bodies of routes that read their bytes themselves (`readsBody`). Runs after `documentMediaTypes`.
import type { SwaggerTransform } from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { authModeOf } from '../auth/authenticate.js';
import { WORKSPACE_HEADER, WORKSPACE_QUERY_PARAMETER } from '../auth/workspace-guard.js';
import {
  honoursIdempotencyKey,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_TTL_HOURS,
  REPLAYED_HEADER,
} from '../idempotency.js';
import { REQUEST_ID_PATTERN } from './hardening.js';
import { EVENT_STREAM_MEDIA_TYPE, PROBLEM_MEDIA_TYPE, READS_BODY, type ReadBodyMedia } from './openapi-media.js';

/** Operation member marking a route that honours Idempotency-Key (replaced by the header parameter). */
const IDEMPOTENT = 'x-idempotent';
/** Operation member marking a route whose authentication compares X-Atrium-Workspace (replaced by the parameter). */
const NAMES_WORKSPACE = 'x-names-workspace';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REQUEST_ID_HEADER = 'X-Request-Id';
export const RETRY_AFTER_HEADER = 'Retry-After';

interface HeaderObject {
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
type HeaderRef = { $ref: string };
interface ResponseObject {
  description?: string;
  headers?: Record<string, HeaderObject | HeaderRef>;
  content?: Record<string, unknown>;
}
interface OperationObject {
  parameters?: Record<string, unknown>[];
  requestBody?: Record<string, unknown>;
  responses?: Record<string, ResponseObject>;
  [IDEMPOTENT]?: boolean;
  [NAMES_WORKSPACE]?: boolean;
  [READS_BODY]?: Record<string, ReadBodyMedia>;
}
interface Document {
  paths?: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown> & {
    headers?: Record<string, HeaderObject>;
    parameters?: Record<string, Record<string, unknown>>;
  };
}

/**
 * The per-route step (after fastify-type-provider-zod's): marks the operations whose route honours
 * Idempotency-Key. Only the document is built from what this returns; Fastify's own schemas are untouched.
 */
export const routeTransform: SwaggerTransform = (input) => {
  const out = jsonSchemaTransform(input as Parameters<typeof jsonSchemaTransform>[0]);
  const { route } = input;
  if (out.schema?.hide) return out;
  const idempotent = honoursIdempotencyKey(route.config, route.url);
  const mode = authModeOf(route.config?.auth, route.url);
  const namesWorkspace = (mode === 'user' || mode === 'admin') && !route.config?.anyWorkspace;
  if (!idempotent && !namesWorkspace) return out;
  return {
    ...out,
    schema: {
      ...(out.schema ?? {}),
      ...(idempotent ? { [IDEMPOTENT]: true } : {}),
      ...(namesWorkspace ? { [NAMES_WORKSPACE]: true } : {}),
    },
  };
};

/** Reusable response headers (`#/components/headers/<name>`). */
const HEADERS: Record<string, HeaderObject> = {
  RequestId: {
    description:
      'The id of this request: the `X-Request-Id` the request sent when it is 1–128 of `A–Z a–z 0–9 . _ : -`, ' +
      'else a generated `req_…` id. Problems carry it as `requestId`, and logs carry it.',
    required: true,
    schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source },
  },
  RetryAfterRateLimited: {
    description:
      'Sent with every 429 `rate_limited`: when to try again, in seconds (or the HTTP date a calendar provider ' +
      'gave). Not sent with other 4xx answers.',
    schema: { type: 'string' },
  },
  RetryAfterRequired: {
    description: 'When to try again, in seconds (or the HTTP date a calendar provider gave).',
    required: true,
    schema: { type: 'string' },
  },
  RetryAfterUnavailable: {
    description:
      'Sent with 503 `unavailable` while a dependency is failing fast (its circuit breaker is open), and with ' +
      "502 `provider_unavailable` when a calendar provider's breaker is open or its token endpoint is unavailable: " +
      'seconds to wait (30). Not sent with other 5xx answers.',
    schema: { type: 'string' },
  },
  IdempotentReplayed: {
    description:
      '`true` when this is the stored answer to an earlier request with the same Idempotency-Key and body ' +
      '(nothing was done again); absent otherwise.',
    schema: { type: 'string', enum: ['true'] },
  },
};
const ref = (name: keyof typeof HEADERS): HeaderRef => ({ $ref: `#/components/headers/${name}` });

/** The header parameter of the operations that honour Idempotency-Key (contract §1). */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'Makes a retry safe. The first request with a key claims it (per user, workspace and route); a repeat with ' +
    `the same key and the same body within ${IDEMPOTENCY_TTL_HOURS} h creates nothing and gets the first answer again, ` +
    `with \`${REPLAYED_HEADER}: true\`. The same key with a different body is 422 \`idempotency_key_reused\`; a ` +
    'repeat while the first request is still running is 409 `conflict`; a repeat of a first request that was ' +
    'interrupted after it saved its work (its answer lost) is 409 `idempotency_outcome_unknown`. Answers 5xx, 429, ' +
    '409 and 408 are not kept, so a retry with the same key runs again, unless the first request had already saved ' +
    'its work (then 409 `idempotency_outcome_unknown`: nothing runs twice). A key that is not 1–255 visible ASCII ' +
    'characters is 400 `validation_failed`.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source },
};

/** Reusable parameters (`#/components/parameters/<name>`): the workspace a request is made for. */
const PARAMETERS: Record<string, Record<string, unknown>> = {
  Workspace: {
    name: WORKSPACE_HEADER,
    in: 'header',
    required: false,
    description:
      'The workspace this request is made for (the one the page sending it shows). A browser session has one ' +
      'current workspace, which `POST /auth/switch-workspace` in any tab or window changes; when this names ' +
      'another one than the credential is in now (a session switched elsewhere, or an API token, which is bound ' +
      'to one workspace), the answer is 409 `workspace_changed` and nothing is done. The problem names only the ' +
      'workspace the credential is in now (`workspace: {id, name}`). Without it a request acts on the current ' +
      'workspace, as always. Checked before the route runs, after authentication (401) and the CSRF check (403). ' +
      'The web app sends it on every request.',
    schema: { type: 'string', minLength: 1 },
  },
  WorkspaceQuery: {
    name: WORKSPACE_QUERY_PARAMETER,
    in: 'query',
    required: false,
    description:
      `As the \`${WORKSPACE_HEADER}\` header, for an event stream opened by EventSource (which sends no headers ` +
      'of its own): a reconnect after a switch elsewhere is then 409 `workspace_changed` instead of the other ' +
      "workspace's stream. Read only on requests with `Accept: text/event-stream`.",
    schema: { type: 'string', minLength: 1 },
  },
};
const parameterRef = (name: keyof typeof PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });

/** Whether an operation answers an event stream (the document's 200 is text/event-stream; on a GET, what EventSource opens). */
const isEventStream = (operation: OperationObject) =>
  Object.keys((operation.responses?.['200'] as ResponseObject | undefined)?.content ?? {}).includes(
    EVENT_STREAM_MEDIA_TYPE,
  );

/** Whether an answer with this status may be a replay (the statuses whose answers are stored). */
const mayBeReplayed = (status: string) => !/^5/.test(status) && !['408', '409', '429'].includes(status);

function addHeader(response: ResponseObject, name: string, header: HeaderRef): void {
  response.headers = { ...response.headers, [name]: header };
}

/** Whether a 5xx answer is one of ours (problem+json) rather than another format (a health report). */
const isProblem = (response: ResponseObject) =>
  !response.content || Object.keys(response.content).includes(PROBLEM_MEDIA_TYPE);

/** Adds the headers, the Idempotency-Key parameter and the raw request bodies in place; returns the document. */
export function documentHeadersAndBodies<T extends Document>(document: T): T {
  document.components = {
    ...document.components,
    headers: { ...document.components?.headers, ...HEADERS },
    parameters: { ...document.components?.parameters, ...PARAMETERS },
  };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    // An emulator answers as the provider it stands in for: its own Retry-After, if any.
    const ours = !path.startsWith('/_emulators/');
    for (const [method, operation] of Object.entries(item) as [string, OperationObject][]) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      const idempotent = operation[IDEMPOTENT] === true;
      delete operation[IDEMPOTENT];
      if (idempotent) operation.parameters = [...(operation.parameters ?? []), { ...IDEMPOTENCY_KEY_PARAMETER }];
      const namesWorkspace = operation[NAMES_WORKSPACE] === true;
      delete operation[NAMES_WORKSPACE];
      if (namesWorkspace) {
        operation.parameters = [
          ...(operation.parameters ?? []),
          parameterRef('Workspace'),
          ...(method === 'get' && isEventStream(operation) ? [parameterRef('WorkspaceQuery')] : []),
        ];
      }
      const reads = operation[READS_BODY];
      delete operation[READS_BODY];
      if (reads) {
        operation.requestBody = {
          required: true,
          content: Object.fromEntries(
            Object.entries(reads).map(([type, media]) => [
              type,
              { schema: { ...media.schema, description: media.description } },
            ]),
          ),
        };
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        addHeader(response, REQUEST_ID_HEADER, ref('RequestId'));
        if (ours && status === '429') addHeader(response, RETRY_AFTER_HEADER, ref('RetryAfterRequired'));
        else if (ours && status.toUpperCase() === '4XX')
          addHeader(response, RETRY_AFTER_HEADER, ref('RetryAfterRateLimited'));
        else if (ours && ['5XX', '502', '503'].includes(status.toUpperCase()) && isProblem(response))
          addHeader(response, RETRY_AFTER_HEADER, ref('RetryAfterUnavailable'));
        if (idempotent && mayBeReplayed(status)) addHeader(response, REPLAYED_HEADER, ref('IdempotentReplayed'));
      }
    }
  }
  return document;
}
