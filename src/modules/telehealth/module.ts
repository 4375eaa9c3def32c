import { videoEmulator } from '../../emulators/video/routes.js';
import { defineModule } from '../../platform/module.js';
import { telehealthMonitors } from './monitors.js';
import { telehealthRoutes } from './routes.js';
import { prewarmRoomJob } from './service.js';
import * as tables from './tables.js';

export const telehealthModule = defineModule({
  name: 'telehealth',
  tags: [{ name: 'telehealth', description: 'Video rooms for visits: pre-warmed, started, ended' }],
  routes: telehealthRoutes,
  tables,
  monitors: telehealthMonitors,
  jobTypes: [prewarmRoomJob],
  emulators: { video: videoEmulator },
});
