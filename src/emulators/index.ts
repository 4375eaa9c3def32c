import type { FastifyInstance } from 'fastify';
import { aiEmulator } from './ai/routes.js';
import { mailEmulator } from './mail/routes.js';
import { payerEmulator } from './payer/routes.js';

/** Local stand-ins for external providers, mounted under /_emulators/<name> (contract §11). */
export const EMULATORS: Record<string, (app: FastifyInstance) => Promise<void>> = {
  mail: mailEmulator,
  ai: aiEmulator,
  payer: payerEmulator,
};

export async function emulatorRoutes(app: FastifyInstance): Promise<void> {
  for (const [name, plugin] of Object.entries(EMULATORS)) {
    await app.register(plugin, { prefix: `/${name}` });
  }
}
