// How a module declares itself. Each module exports one `defineModule({...})` from its index.ts and
// the composition root (src/modules/index.ts) lists the modules once; app.ts, workers.ts, the
// emulators and the seed iterate that list, so adding a module edits no central file but that list.
import type { FastifyInstance } from 'fastify';
import type { Tx } from './db/client.js';
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
  /** A number, or read from the configuration when the schedule starts. */
  intervalMs: number | ((deps: AppDeps) => number);
  run(deps: AppDeps): Promise<void>;
}

/** A readiness check of something the module depends on; /readyz fails (503) when one throws. */
export interface HealthProbe {
  name: string;
  check(deps: AppDeps): Promise<void>;
}

export type ProbeStatus = 'pass' | 'warn' | 'fail';

/** One measurement of a dependency (contract §9), as the health+json `checks` entries carry it. */
export interface ProbeResult {
  status: ProbeStatus;
  observedValue: number | string | boolean;
  observedUnit: string;
  output?: string;
}

/**
 * A dependency probe a module declares (contract §9): run every ATRIUM_HEALTH_INTERVAL on one
 * instance, written to service_health_checks; 3 failing runs of any of a component's measurements
 * open an incident; it closes once those that failed during it pass 2 runs and none of the others fails (a
 * sibling that only warns does not hold it open).
 */
export interface DependencyProbe {
  /** `<component>:<measurement>`, e.g. `oauth-google:token-refresh`. */
  id: string;
  /** The user-facing feature it affects (banners, status page): `calendar`, `telehealth`, `mail`, `channels`, … */
  feature: string;
  /** The objective, in words (shown on the dashboard). */
  slo: string;
  /** What users notice while it fails, in their words (the banner). */
  impact?: string;
  /** Whether the feature touches this workspace (banners go only there); default: every workspace. */
  affects?(tx: Tx, workspaceId: string): Promise<boolean>;
  /** Default 5 s; a probe that does not answer in time fails with a timeout. */
  timeoutMs?: number;
  /** `deep` for the nightly run (a fuller check where the probe has one). */
  measure(deps: AppDeps, context: { signal: AbortSignal; deep: boolean }): Promise<ProbeResult>;
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
  /** Long-running loops of the module's own (e.g. webhook delivery's job worker of its own, with 256 slots). */
  jobs?: ModuleJob[];
  /** Typed jobs of platform/jobs (`defineJob`): the instance's job worker runs them. */
  // biome-ignore lint/suspicious/noExplicitAny: definitions of any payload type
  jobTypes?: readonly JobDefinition<any>[];
  schedules?: ModuleSchedule[];
  probes?: HealthProbe[];
  /** Dependency probes for health monitoring (contract §9). */
  monitors?: DependencyProbe[];
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
