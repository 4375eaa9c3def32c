// The workspace a request was made for. A browser session has one current workspace on the server, which a
// switch in any tab changes; a tab still showing the old one would otherwise act on the new one (remove a
// member of the same name, edit a patient, post a message in the wrong clinic). The web app therefore names the
// workspace it shows on every request (`X-Atrium-Workspace`, or the `workspace` query parameter on an event
// stream, which EventSource cannot give headers), and the authentication hook compares it with the
// credential's workspace before the route runs: a mismatch is 409 `workspace_changed`, nothing done. Requests
// that name no workspace are unchanged (API clients, the contract's examples).
import type { FastifyRequest } from 'fastify';
import { withSystem } from '../db/tenant.js';
import { AppError } from '../errors.js';
import type { AppDeps } from '../types.js';
import { principalResolver } from './principals.js';

export const WORKSPACE_HEADER = 'X-Atrium-Workspace';
/** On event streams only (`Accept: text/event-stream`): EventSource sends no headers of its own. */
export const WORKSPACE_QUERY_PARAMETER = 'workspace';

const wantsEventStream = (request: FastifyRequest) =>
  request.method === 'GET' && /(^|[\s,])text\/event-stream\b/i.test(String(request.headers.accept ?? ''));

/** The workspace the request names (header, else an event stream's query parameter), if any. */
export function namedWorkspace(request: FastifyRequest): string | undefined {
  const header = request.headers[WORKSPACE_HEADER.toLowerCase()];
  if (header !== undefined) return Array.isArray(header) ? header.join(', ') : header;
  if (!wantsEventStream(request)) return undefined;
  const value = (request.query as Record<string, unknown> | undefined)?.[WORKSPACE_QUERY_PARAMETER];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/**
 * 409 `workspace_changed`: the request was made for another workspace than the credential's `current` one.
 * Names only the current workspace (the caller is a member of it); nothing of the one the request named, which
 * may be anything the client sent.
 */
export function workspaceChanged(via: 'token' | 'session' | 'system', current: { id: string; name: string }) {
  const detail =
    via === 'token'
      ? `This API token works in ${current.name} only; the request was made for another workspace, so nothing was done.`
      : `This session is now in ${current.name} (switched in another tab or window); the request was made for ` +
        'another workspace, so nothing was done.';
  return new AppError('workspace_changed', 409, detail, { workspace: { id: current.id, name: current.name } });
}

/** The current workspace's id and name, for the 409 (read past the cache: a rename shows at once). */
export async function currentWorkspace(deps: AppDeps, workspaceId: string): Promise<{ id: string; name: string }> {
  const name = await withSystem(deps.db, (tx) => principalResolver().workspaceName(tx, workspaceId));
  return { id: workspaceId, name: name ?? workspaceId };
}

/**
 * Throws 409 `workspace_changed` when the request names a workspace that is not `workspaceId` (the one its
 * credential is in now). Routes with `config.anyWorkspace` (switching workspace, signing out) act on no
 * workspace's data and are not checked.
 */
export async function checkNamedWorkspace(
  deps: AppDeps,
  request: FastifyRequest,
  workspaceId: string,
  via: 'token' | 'session',
): Promise<void> {
  if (request.routeOptions.config?.anyWorkspace) return;
  const named = namedWorkspace(request);
  if (named === undefined || named === workspaceId) return;
  throw workspaceChanged(via, await currentWorkspace(deps, workspaceId));
}
