/** Tiny fetch wrapper for the Atrium API: JSON in and out, cookie session, problem+json errors as ApiError. */

export interface FieldProblem {
  path: string;
  message: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export const API_BASE = '/api/v1';

/** An error answer from the API (or a failure to reach it), parsed from RFC 9457 problem+json. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors: FieldProblem[];
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  /** The whole problem document, for extension members such as `requiredTier` or `limit`. */
  readonly problem: Record<string, unknown>;

  constructor(
    status: number,
    code: string,
    detail: string,
    options: {
      errors?: FieldProblem[];
      requestId?: string;
      retryAfterSeconds?: number;
      problem?: Record<string, unknown>;
    } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.errors = options.errors ?? [];
    this.requestId = options.requestId;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.problem = options.problem ?? {};
  }
}

type QueryValue = string | number | boolean | null | undefined;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

function buildUrl(path: string, query?: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const search = params.toString();
  return `${API_BASE}${path}${search ? `?${search}` : ''}`;
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

async function readJson(response: Response): Promise<unknown> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('json')) return undefined;
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

function toApiError(response: Response, body: unknown): ApiError {
  const problem = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const code = typeof problem.code === 'string' ? problem.code : 'http_error';
  const detail =
    typeof problem.detail === 'string' && problem.detail
      ? problem.detail
      : `The server answered ${response.status} ${response.statusText}`.trim();
  const errors = Array.isArray(problem.errors)
    ? problem.errors.filter(
        (e): e is FieldProblem =>
          !!e && typeof e === 'object' && typeof e.path === 'string' && typeof e.message === 'string',
      )
    : [];
  return new ApiError(response.status, code, detail, {
    errors,
    requestId:
      typeof problem.requestId === 'string' ? problem.requestId : (response.headers.get('x-request-id') ?? undefined),
    retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
    problem,
  });
}

/** Calls `/api/v1{path}`; resolves with the parsed JSON body (undefined for 204), rejects with ApiError. */
export async function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = {
    Accept: 'application/json, application/problem+json',
    // The server's CSRF check for cookie sessions accepts this header on unsafe methods.
    'X-Requested-With': 'fetch',
    ...options.headers,
  };
  const init: RequestInit = {
    method: options.method ?? 'GET',
    credentials: 'same-origin',
    headers,
    signal: options.signal,
  };
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(buildUrl(path, options.query), init);
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'network_error', 'Could not reach the server. Check your connection and try again.');
  }
  const body = response.status === 204 ? undefined : await readJson(response);
  if (!response.ok) throw toApiError(response, body);
  return body as T;
}

/** A fresh key for `Idempotency-Key`: a retried create is then applied once. */
export function idempotencyKey(): string {
  if (typeof crypto !== 'undefined' && 'randomUUID' in crypto) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}

export const api = {
  put: <T>(path: string, body: unknown) => apiRequest<T>(path, { method: 'PUT', body }),
  get: <T>(path: string, query?: Record<string, QueryValue>, signal?: AbortSignal) =>
    apiRequest<T>(path, { query, signal }),
  post: <T>(path: string, body?: unknown) => apiRequest<T>(path, { method: 'POST', body: body ?? {} }),
  patch: <T>(path: string, body: unknown) => apiRequest<T>(path, { method: 'PATCH', body }),
  delete: <T = void>(path: string) => apiRequest<T>(path, { method: 'DELETE' }),
};

function formatWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** A sentence for people: the problem's detail, plus a retry hint when rate limited. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 429 && error.retryAfterSeconds !== undefined) {
      return `${error.detail.replace(/[.\s]+$/, '')}. Retry after ${formatWait(error.retryAfterSeconds)}.`;
    }
    return error.detail;
  }
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong.';
}

/** The top-level field a problem path names: `body.givenName` and `givenName` both give `givenName`. */
export function fieldName(path: string): string | undefined {
  const segments = path.split(/[./]/).filter(Boolean);
  if (segments[0] === 'body') segments.shift();
  return segments[0];
}

/** Field errors keyed by field name (first message wins); problems naming no field are left out. */
export function fieldErrors(error: unknown): Record<string, string> {
  const result: Record<string, string> = {};
  if (!(error instanceof ApiError)) return result;
  for (const problem of error.errors) {
    const field = fieldName(problem.path);
    if (field && !(field in result)) result[field] = problem.message;
  }
  return result;
}
