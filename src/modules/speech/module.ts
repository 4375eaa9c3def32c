import { ttsEmulator } from '../../emulators/tts/routes.js';
import { defineModule } from '../../platform/module.js';
import { speechMonitors } from './monitors.js';
import { speechRoutes } from './routes.js';

export const speechModule = defineModule({
  name: 'speech',
  tags: [{ name: 'speech', description: 'Text read aloud, with a fallback voice provider' }],
  routes: speechRoutes,
  monitors: speechMonitors,
  emulators: { tts: ttsEmulator },
});
