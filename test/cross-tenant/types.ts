import type { TestApp } from '../helpers/app.js';
import type { TestWorkspace } from '../helpers/factories.js';

export interface CrossTenantRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  payload?: unknown;
  /**
   * Where the contract names a specific answer for an id of another workspace (e.g. 422
   * `unknown_recipient`, `unknown_patient`); otherwise 404 `not_found`. Either way the answer must be
   * the one an id that exists nowhere gets, so it never reveals that the id exists elsewhere.
   */
  expect?: { status: number; code: string };
}

/**
 * One resource family of a module. `setup` creates data in workspace A (returns ids by name);
 * `attackerSetup` may create workspace B's own resources (a thread, a patient) so that requests
 * can aim A's ids from inside B's data: in paths, query strings and bodies. Each denied request
 * is sent with workspace B's admin token and must answer exactly 404 `not_found` (or its
 * `expect`), the same as for an id that exists nowhere, and never leak. Listing requests
 * (`lists`) must answer without any of A's ids in the body.
 */
export interface CrossTenantCase {
  name: string;
  setup(t: TestApp, owner: TestWorkspace): Promise<Record<string, string>>;
  /** Creates B's own resources (ids by name) for requests that carry A's ids inside B's data. */
  attackerSetup?(t: TestApp, attacker: TestWorkspace): Promise<Record<string, string>>;
  /** Sent as B: must be 404 `not_found` (or the request's `expect`). `own` holds attackerSetup's ids. */
  denied(ids: Record<string, string>, own: Record<string, string>): CrossTenantRequest[];
  /** Sent as B: must succeed but contain none of A's ids. */
  lists?(ids: Record<string, string>): CrossTenantRequest[];
  /** Sent as A after B's attempts: A's data must be unchanged (status 200 and same body). */
  unchanged?(ids: Record<string, string>): CrossTenantRequest[];
}
