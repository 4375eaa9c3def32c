import { index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** A payment asked of a patient through a hosted checkout page (Stripe Checkout or its emulator). */
export const payments = pgTable(
  'payments',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    patientId: text('patient_id'),
    description: text('description').notNull(),
    amountCents: integer('amount_cents').notNull(),
    currency: text('currency').notNull(),
    providerSessionId: text('provider_session_id').notNull(),
    checkoutUrl: text('checkout_url').notNull(),
    status: text('status', { enum: ['open', 'paid', 'expired'] })
      .notNull()
      .default('open'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    paidAt: ts('paid_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('payments_session_idx').on(t.providerSessionId),
    index('payments_patient_idx').on(t.workspaceId, t.patientId),
  ],
);
