// How a module declares itself. Each module exports one `defineModule({...})` from its index.ts and
// the composition root (src/modules/index.ts) lists the modules once; app.ts, workers.ts, the
// emulators and the seed iterate that list, so adding a module edits no central file but that list.
import type { FastifyInstance } from 'fastify';
import type { JobDefinition } from './jobs/jobs.js';
import type { AppDeps } from './types.js';
import type { Worker } from './worker.js';

export type RoutePlugin = (app: FastifyInstance) => Promise<void>;

/** A background worker of the module, started once per instance by startBackground (each safe on every instance). */
export interface ModuleJob {
  name: string;
  start(app: FastifyInstance): Promise<Worker>;
}

/** Periodic work run on one instance per interval (a lease row of the scheduler). */
export interface ModuleSchedule {
  name: string;
  intervalMs: number;
  run(deps: AppDeps): Promise<void>;
}

/** A readiness check of something the module depends on; /readyz fails (503) when one throws. */
export interface HealthProbe {
  name: string;
  check(deps: AppDeps): Promise<void>;
}

/** What the demo seed of earlier modules created, for the ones after them (modules seed in list order). */
export type SeedState = Record<string, unknown>;

export interface ModuleDefinition {
  /** The folder name under src/modules. */
  name: string;
  /** The OpenAPI tags its routes use, with a line each for the document's tag list. */
  tags?: { name: string; description: string }[];
  /** Routes under /api/v1. */
  routes?: RoutePlugin;
  /** Routes at the root, outside /api/v1 (probes, provider callbacks). */
  rootRoutes?: RoutePlugin;
  /** The module's Drizzle tables (drizzle-kit reads every src/modules/<name>/tables.ts; listed here for the map). */
  tables?: Record<string, unknown>;
  /** Long-running loops of the module's own (e.g. webhook delivery on its claims table). */
  jobs?: ModuleJob[];
  /** Typed jobs of platform/jobs (`defineJob`): the instance's job worker runs them. */
  // biome-ignore lint/suspicious/noExplicitAny: definitions of any payload type
  jobTypes?: readonly JobDefinition<any>[];
  schedules?: ModuleSchedule[];
  probes?: HealthProbe[];
  /** Local stand-ins of the providers its adapters call, mounted at /_emulators/<key> when emulators are on. */
  emulators?: Record<string, RoutePlugin>;
  /** Registers the module's implementations of platform or other modules' interfaces; runs before any route. */
  init?(deps: AppDeps): void;
  /** Demo data (empty database, demo seeding on); receives and extends what earlier modules seeded. */
  seed?(app: FastifyInstance, state: SeedState): Promise<void>;
}

export function defineModule<const M extends ModuleDefinition>(definition: M): M {
  return definition;
}
