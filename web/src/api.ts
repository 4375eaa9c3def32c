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

/** A workspace as the tab names it: its id (sent) and name (said). */
export interface NamedWorkspace {
  id: string;
  name: string;
}

/**
 * The workspace this tab shows (from the signed-in `/me`), named on every request as `X-Atrium-Workspace`. A
 * browser session has one current workspace on the server, which a switch in any tab changes: a tab still showing
 * the old one is then answered 409 `workspace_changed` and nothing is done, instead of acting on the new one.
 */
export const WORKSPACE_HEADER = 'X-Atrium-Workspace';
let shown: NamedWorkspace | null = null;
/** Moves of the session this tab started (a switch, sign-in, leaving): their in-flight neighbours are not "elsewhere". */
let movesStarted = 0;
let movesInFlight = 0;

/** The session was moved under this tab (in another tab or window): what it showed, and where the session is now. */
export interface WorkspaceChange {
  shown: NamedWorkspace;
  current: NamedWorkspace | null;
}
let change: WorkspaceChange | null = null;
const changeListeners = new Set<() => void>();

/** Sets the workspace this tab shows (null: none, e.g. signed out; the next `/me` decides). */
export function showWorkspace(workspace: NamedWorkspace | null): void {
  shown = workspace ? { id: workspace.id, name: workspace.name } : null;
}

const namedWorkspaceIn = (value: unknown): NamedWorkspace | null => {
  const w = value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  return typeof w.id === 'string' && typeof w.name === 'string' ? { id: w.id, name: w.name } : null;
};

/**
 * Runs a request that moves this browser's session to another workspace (switch, sign-in, accepting an
 * invitation, leaving a workspace). Answers meanwhile to requests made for the old workspace are this tab's own
 * doing, not a switch elsewhere; afterwards the tab shows the workspace the answer names, else none until `/me`
 * says which.
 */
export async function moveSession<T>(move: () => Promise<T>): Promise<T> {
  movesStarted += 1;
  movesInFlight += 1;
  const from = shown;
  try {
    const answer = await move();
    showWorkspace(namedWorkspaceIn((answer as { workspace?: unknown } | undefined)?.workspace));
    return answer;
  } catch (error) {
    // The move itself was made for a workspace the session had left elsewhere (leaving it from a stale tab).
    if (error instanceof ApiError && isWorkspaceChanged(error)) raiseWorkspaceChange(error, from);
    throw error;
  } finally {
    movesInFlight -= 1;
  }
}

/** The session's move elsewhere this tab was told of (409 `workspace_changed`), if any; for useSyncExternalStore. */
export const workspaceChange = {
  get: (): WorkspaceChange | null => change,
  subscribe(listener: () => void): () => void {
    changeListeners.add(listener);
    return () => changeListeners.delete(listener);
  },
};

/** Whether an error is the API's 409 `workspace_changed` (the page shows the one notice for it, no error of its own). */
export const isWorkspaceChanged = (error: unknown): boolean =>
  error instanceof ApiError && error.code === 'workspace_changed';

function raiseWorkspaceChange(error: ApiError, sentFor: NamedWorkspace | null): void {
  if (change || !sentFor || shown?.id !== sentFor.id) return;
  change = { shown: sentFor, current: namedWorkspaceIn(error.problem.workspace) };
  for (const listener of changeListeners) listener();
}

function noteWorkspaceChange(error: ApiError, sentFor: NamedWorkspace | null, moves: number): void {
  // Not while (or after) this tab itself moved the session: then the request was made before the move.
  if (movesInFlight > 0 || moves !== movesStarted) return;
  raiseWorkspaceChange(error, sentFor);
}

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
  const sentFor = shown;
  const moves = movesStarted;
  const headers: Record<string, string> = {
    Accept: 'application/json, application/problem+json',
    // The server's CSRF check for cookie sessions accepts this header on unsafe methods.
    'X-Requested-With': 'fetch',
    ...(sentFor ? { [WORKSPACE_HEADER]: sentFor.id } : {}),
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
  if (!response.ok) {
    const error = toApiError(response, body);
    if (isWorkspaceChanged(error)) noteWorkspaceChange(error, sentFor, moves);
    throw error;
  }
  return body as T;
}

/**
 * Opens an event stream of `/api/v1{path}` for the workspace this tab shows. EventSource sends no headers of
 * its own, so the workspace goes as the `workspace` query parameter: after a switch in another tab the server
 * ends the stream and refuses its reconnect (409); EventSource then gives up without saying why, so `/me` is
 * asked, which brings up the notice (a refusal for another reason changes nothing).
 */
export function openEventStream(path: string): EventSource {
  const url = `${API_BASE}${path}`;
  const source = new EventSource(
    shown ? `${url}${url.includes('?') ? '&' : '?'}workspace=${encodeURIComponent(shown.id)}` : url,
  );
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) void apiRequest('/me').catch(() => undefined);
  });
  return source;
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
    if (isWorkspaceChanged(error) && change) return workspaceChangeSentence(change);
    if (error.status === 429 && error.retryAfterSeconds !== undefined) {
      return `${error.detail.replace(/[.\s]+$/, '')}. Retry after ${formatWait(error.retryAfterSeconds)}.`;
    }
    return error.detail;
  }
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong.';
}

/**
 * The words for a session moved under this tab: "This tab was showing Riverside Clinic; you have since switched to
 * Harbor Therapy in another tab. Nothing was changed."
 */
export function workspaceChangeSentence(seen: WorkspaceChange): string {
  const now = seen.current?.name ?? 'another workspace';
  return `This tab was showing ${seen.shown.name}; you have since switched to ${now} in another tab. Nothing was changed.`;
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
