import type {} from '@fastify/cookie';
import type { Config } from '../config.js';
import type { PrincipalCache } from './auth/principal-cache.js';
import type { RequestContext } from './context.js';
import type { Database, Db } from './db/client.js';
import type { DependencyProbe, HealthProbe } from './module.js';
import type { Scheduler } from './scheduler/scheduler.js';

export type AuthMode = 'user' | 'admin' | 'operator' | 'cron' | 'public';

/** What every module's routes and services may use; built once in buildApp. */
export interface AppDeps {
  config: Config;
  database: Database;
  db: Db;
  scheduler: Scheduler;
  /** Resolved credentials of this instance (invalidated across instances by NOTIFY). */
  principals: PrincipalCache;
  /** Readiness checks the modules declared (defineModule `probes`); /readyz runs them after the database's. */
  probes: HealthProbe[];
  /** Dependency probes the modules declared (defineModule `monitors`), run by the health module. */
  monitors: DependencyProbe[];
  /** Every route registered on the app (for docs and the coverage tests: cross-tenant, the OpenAPI document). */
  routes: { method: string; url: string; auth?: AuthMode; idempotent?: boolean }[];
  /** Base URL this instance is reachable at (public URL, or the actual listening address). */
  selfUrl(): string;
}

declare module 'fastify' {
  interface FastifyInstance {
    atrium: AppDeps;
  }
  interface FastifyRequest {
    ctx?: RequestContext;
    sessionId?: string;
    /** The credential this request authenticated with (hash, kind): long-lived streams re-check it. */
    credential?: { hash: string; via: 'token' | 'session' };
  }
  interface FastifyContextConfig {
    /** Who may call the route; default `user` under /api/v1, `public` elsewhere. */
    auth?: AuthMode;
    /** Accepts an Idempotency-Key header (contract §1). */
    idempotent?: boolean;
    /**
     * The route acts on no workspace's data (switching workspace, signing out): a request naming another
     * workspace than its credential's (`X-Atrium-Workspace`) is not refused (platform/auth/workspace-guard.ts).
     */
    anyWorkspace?: boolean;
  }
}
