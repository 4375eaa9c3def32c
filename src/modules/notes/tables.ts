import { index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** A SOAP clinical note; immutable once signed. */
export const soapNotes = pgTable(
  'soap_notes',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    patientId: text('patient_id').notNull(),
    authorId: text('author_id').notNull(),
    subjective: text('subjective').notNull().default(''),
    objective: text('objective').notNull().default(''),
    assessment: text('assessment').notNull().default(''),
    plan: text('plan').notNull().default(''),
    status: text('status', { enum: ['draft', 'signed'] })
      .notNull()
      .default('draft'),
    signedAt: ts('signed_at'),
    signedBy: text('signed_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('soap_notes_patient_idx').on(t.workspaceId, t.patientId),
  ],
);
