import { date, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** An insurance claim: submitted, then adjudicated once (paid or denied). */
export const claims = pgTable(
  'claims',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    patientId: text('patient_id').notNull(),
    noteId: text('note_id'),
    payer: text('payer').notNull(),
    serviceDate: date('service_date', { mode: 'string' }),
    codes: text('codes').array().notNull(),
    amountCents: integer('amount_cents').notNull(),
    status: text('status', { enum: ['submitted', 'paid', 'denied'] })
      .notNull()
      .default('submitted'),
    paidAmountCents: integer('paid_amount_cents'),
    denialReason: text('denial_reason'),
    submittedBy: text('submitted_by').notNull(),
    submittedAt: ts('submitted_at').notNull().defaultNow(),
    adjudicatedAt: ts('adjudicated_at'),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] }), index('claims_patient_idx').on(t.workspaceId, t.patientId)],
);
