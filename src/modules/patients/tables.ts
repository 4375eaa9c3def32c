import { sql } from 'drizzle-orm';
import { date, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';
import { workspaceIdColumn } from '../identity/index.js';

export const patients = pgTable(
  'patients',
  {
    workspaceId: workspaceIdColumn(),
    id: text('id').notNull(),
    givenName: text('given_name').notNull(),
    familyName: text('family_name').notNull(),
    dateOfBirth: date('date_of_birth', { mode: 'string' }),
    mrn: text('mrn'),
    preferredProviderId: text('preferred_provider_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('patients_name_idx').on(t.workspaceId, t.familyName),
    // An MRN names one patient in a workspace; the index (not a prior SELECT) decides races.
    uniqueIndex('patients_mrn_unique').on(t.workspaceId, t.mrn).where(sql`mrn IS NOT NULL`),
  ],
);

export const patientAuthorizations = pgTable(
  'patient_authorizations',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    patientId: text('patient_id').notNull(),
    service: text('service').notNull(),
    units: integer('units').notNull(),
    unitMinutes: integer('unit_minutes').notNull(),
    validFrom: date('valid_from', { mode: 'string' }).notNull(),
    validTo: date('valid_to', { mode: 'string' }).notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('patient_auth_patient_idx').on(t.workspaceId, t.patientId),
  ],
);

/**
 * A patient's insurance coverage (billing data): set by PUT /patients/:id/coverage and by skills under
 * billing:write, read by the eligibility skill. Rows keep history through their effective dates.
 */
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
