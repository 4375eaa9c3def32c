// The composition root's one list of modules. app.ts registers their routes (in this order), workers.ts
// starts their jobs, the emulators and the demo seed come from here. A new module adds one line.

import type { ModuleDefinition } from '../platform/module.js';
import { auditModule } from './audit/index.js';
import { calendarModule } from './calendar/index.js';
import { channelsModule } from './channels/index.js';
import { claimsModule } from './claims/index.js';
import { directMessagesModule } from './direct-messages/index.js';
import { healthModule } from './health/index.js';
import { identityModule } from './identity/index.js';
import { mailModule } from './mail/index.js';
import { marketplaceModule } from './marketplace/index.js';
import { notesModule } from './notes/index.js';
import { patientsModule } from './patients/index.js';
import { paymentsModule } from './payments/index.js';
import { skillsModule } from './skills/index.js';
import { speechModule } from './speech/index.js';
import { telehealthModule } from './telehealth/index.js';
import { webhooksModule } from './webhooks/index.js';

export const MODULES: readonly ModuleDefinition[] = [
  healthModule,
  identityModule,
  patientsModule,
  auditModule,
  webhooksModule,
  notesModule,
  claimsModule,
  directMessagesModule,
  marketplaceModule,
  skillsModule,
  telehealthModule,
  calendarModule,
  mailModule,
  channelsModule,
  paymentsModule,
  speechModule,
];
