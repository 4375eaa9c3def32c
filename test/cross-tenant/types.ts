import type { TestApp } from '../helpers/app.js';
import type { TestWorkspace } from '../helpers/factories.js';

export interface CrossTenantRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  payload?: unknown;
}

/**
 * One resource family of a module. `setup` creates data in workspace A (returns ids by name);
 * each request is sent with workspace B's admin token and must be 404 (never 2xx, never a
 * leak). Listing requests (`lists`) must answer without any of A's ids in the body.
 */
export interface CrossTenantCase {
  name: string;
  setup(t: TestApp, owner: TestWorkspace): Promise<Record<string, string>>;
  /** Sent as B: must be 404 (or 403 where the route is role-gated first). */
  denied(ids: Record<string, string>): CrossTenantRequest[];
  /** Sent as B: must succeed but contain none of A's ids. */
  lists?(ids: Record<string, string>): CrossTenantRequest[];
  /** Sent as A after B's attempts: A's data must be unchanged (status 200 and same body). */
  unchanged?(ids: Record<string, string>): CrossTenantRequest[];
}
