import { calendarCases } from './calendar.cases.js';
import { channelCases } from './channels.cases.js';
import { directMessageCases } from './direct-messages.cases.js';
import { foundationCases } from './foundation.cases.js';
import { identityAdminCases } from './identity-admin.cases.js';
import { marketplaceCases } from './marketplace.cases.js';
import { patientCoverageCases } from './patient-coverage.cases.js';
import { paymentCases } from './payments.cases.js';
import type { CrossTenantCase } from './types.js';
import { webhookCases } from './webhooks.cases.js';

/** Every module adds its cases here; the coverage test fails for a tenant route no case exercises. */
export const ALL_CASES: CrossTenantCase[] = [
  ...foundationCases,
  ...identityAdminCases,
  ...directMessageCases,
  ...webhookCases,
  ...marketplaceCases,
  ...patientCoverageCases,
  ...calendarCases,
  ...channelCases,
  ...paymentCases,
];
