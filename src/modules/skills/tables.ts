import { date, index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** A patient's insurance coverage (billing data), written and read by skills under billing:* scopes. */
export const patientCoverages = pgTable(
  'patient_coverages',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    patientId: text('patient_id').notNull(),
    payerId: text('payer_id').notNull(),
    payerName: text('payer_name').notNull(),
    memberId: text('member_id').notNull(),
    groupNumber: text('group_number'),
    planName: text('plan_name'),
    effectiveFrom: date('effective_from', { mode: 'string' }).notNull(),
    effectiveTo: date('effective_to', { mode: 'string' }),
    createdAt: ts('created_at').notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('patient_coverages_patient_idx').on(t.workspaceId, t.patientId),
  ],
);
