import { aiEmulator } from '../../emulators/ai/routes.js';
import { payerEmulator } from '../../emulators/payer/routes.js';
import { defineModule } from '../../platform/module.js';
import { registerBuiltinSkills } from '../marketplace/index.js';
import { BUILTIN_SKILLS } from './catalog/index.js';
import { aiMonitors } from './chat/monitors.js';
import { skillRoutes } from './routes.js';
import * as tables from './tables.js';

export const skillsModule = defineModule({
  name: 'skills',
  tags: [{ name: 'skills', description: 'Installed skills: instructions, tool invocation and the chat' }],
  routes: skillRoutes,
  tables,
  monitors: aiMonitors,
  // The model provider and the payer connection have local stand-ins (wrapped: the payer emulator
  // imports this module's index for the X12 types, so its binding may not exist yet at load time).
  emulators: { ai: (app) => aiEmulator(app), payer: (app) => payerEmulator(app) },
  // The marketplace lists the built-in skills this module implements.
  init: () => registerBuiltinSkills(BUILTIN_SKILLS),
});
