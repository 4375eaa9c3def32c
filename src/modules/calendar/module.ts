import { googleEmulator, microsoftEmulator, zoomEmulator } from '../../emulators/calendar/index.js';
import { defineModule } from '../../platform/module.js';
import { onMemberRemoved } from '../identity/index.js';
import { registerAuthorizationUsage } from '../patients/index.js';
import { registerAppointmentSource } from '../skills/index.js';
import { disconnectRemovedMember } from './connections.js';
import { calendarMonitors } from './monitors.js';
import { nextAppointment } from './next-appointment.js';
import { calendarRoutes } from './routes.js';
import { seedCalendar } from './seed.js';
import { unitsHeld } from './sessions.js';
import * as tables from './tables.js';
import { taskRoutes } from './tasks-routes.js';

export const calendarModule = defineModule({
  name: 'calendar',
  tags: [{ name: 'calendar', description: 'Google and Microsoft calendars, Meet/Teams/Zoom, one events API' }],
  routes: async (app) => {
    await calendarRoutes(app);
    await taskRoutes(app);
  },
  tables,
  monitors: calendarMonitors,
  emulators: { google: googleEmulator, microsoft: microsoftEmulator, zoom: zoomEmulator },
  seed: seedCalendar,
  init: () => {
    // Authorizations answer how many of their units the calendar's sessions use.
    registerAuthorizationUsage(unitsHeld);
    // A removed member's calendar accounts are disconnected in the removal's transaction.
    onMemberRemoved(disconnectRemovedMember);
    // The skills' pre-call brief names the patient's next appointment from the calendars.
    registerAppointmentSource(nextAppointment);
  },
});
