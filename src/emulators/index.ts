import type { FastifyInstance } from 'fastify';
import type { ModuleDefinition, RoutePlugin } from '../platform/module.js';
import { mailEmulator } from './mail/routes.js';

/** The platform's own stand-ins (mail); modules declare theirs in defineModule({ emulators }). */
const PLATFORM_EMULATORS: Record<string, RoutePlugin> = { mail: mailEmulator };

/** Every emulator, by the name it is mounted under. */
export function emulatorsOf(modules: readonly ModuleDefinition[]): Record<string, RoutePlugin> {
  const all = { ...PLATFORM_EMULATORS };
  for (const module of modules) {
    for (const [name, plugin] of Object.entries(module.emulators ?? {})) {
      if (all[name]) throw new Error(`Two emulators are named ${name} (module ${module.name})`);
      all[name] = plugin;
    }
  }
  return all;
}

/** Local stand-ins for external providers, mounted under /_emulators/<name> (contract §11). */
export function emulatorRoutes(modules: readonly ModuleDefinition[]) {
  return async (app: FastifyInstance): Promise<void> => {
    for (const [name, plugin] of Object.entries(emulatorsOf(modules))) {
      await app.register(plugin, { prefix: `/${name}` });
    }
  };
}
