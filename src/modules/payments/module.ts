import { paymentsEmulator } from '../../emulators/payments/routes.js';
import { defineModule } from '../../platform/module.js';
import { paymentMonitors } from './monitors.js';
import { paymentRoutes } from './routes.js';
import * as tables from './tables.js';

export const paymentsModule = defineModule({
  name: 'payments',
  tags: [{ name: 'payments', description: 'Payment links for patients (hosted checkout) and the provider’s webhook' }],
  routes: paymentRoutes,
  tables,
  monitors: paymentMonitors,
  // Wrapped: the emulator imports this module's index, whose binding may not exist yet at load time.
  emulators: { payments: (app) => paymentsEmulator(app) },
});
