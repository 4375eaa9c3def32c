import { videoEmulator } from '../../emulators/video/routes.js';
import { defineModule } from '../../platform/module.js';
import { telehealthMonitors } from './monitors.js';
import { telehealthRoutes } from './routes.js';
import { prewarmRoomJob, requeueStalledRooms } from './service.js';
import * as tables from './tables.js';

export const telehealthModule = defineModule({
  name: 'telehealth',
  tags: [{ name: 'telehealth', description: 'Video rooms for visits: pre-warmed, started, ended' }],
  routes: telehealthRoutes,
  tables,
  monitors: telehealthMonitors,
  jobTypes: [prewarmRoomJob],
  schedules: [
    {
      // Pending rooms whose pre-warm job is gone (dead, or lost) get a new one: none stays pending for good.
      name: 'telehealth.requeue-rooms',
      intervalMs: 5 * 60_000,
      run: async (deps) => void (await requeueStalledRooms(deps)),
    },
  ],
  emulators: { video: videoEmulator },
});
