import { and, asc, desc, eq, ilike, inArray, lt, or, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { daySchema } from '../../platform/http-schemas.js';
import { patientAuthorizations, patientCoverages, patients } from './tables.js';

export type PatientRow = typeof patients.$inferSelect;
export type AuthorizationRow = typeof patientAuthorizations.$inferSelect;
export type CoverageRow = typeof patientCoverages.$inferSelect;

/** Whether `error` (or its cause, as drivers and drizzle wrap it) is a violation of the unique index `name`. */
export function isUniqueViolation(error: unknown, name: string): boolean {
  for (let e = error as { code?: unknown; constraint?: unknown; message?: unknown; cause?: unknown } | undefined; e; ) {
    if (e.code === '23505' && (e.constraint === name || String(e.message).includes(name))) return true;
    e = e.cause as typeof e;
  }
  return false;
}

export const MRN_UNIQUE_INDEX = 'patients_mrn_unique';

export async function insertPatient(tx: Tx, row: typeof patients.$inferInsert): Promise<PatientRow> {
  const [created] = await tx.insert(patients).values(row).returning();
  return created;
}

export async function findPatient(tx: Tx, workspaceId: string, id: string): Promise<PatientRow | undefined> {
  const [row] = await tx
    .select()
    .from(patients)
    .where(and(eq(patients.workspaceId, workspaceId), eq(patients.id, id)));
  return row;
}

export async function findPatientsByIds(tx: Tx, workspaceId: string, ids: string[]): Promise<PatientRow[]> {
  if (ids.length === 0) return [];
  return tx
    .select()
    .from(patients)
    .where(and(eq(patients.workspaceId, workspaceId), inArray(patients.id, ids)));
}

/**
 * `YYYY-MM-DD` naming a real day PostgreSQL can hold (2026-02-30 is not one, nor is 0000-01-01:
 * neither may reach a date comparison).
 */
function isCalendarDate(value: string): boolean {
  return daySchema.safeParse(value).success;
}

/** Exact matches (names ignoring case) for the duplicate check before a patient is registered. */
export interface ExactPatientFilter {
  givenName?: string;
  familyName?: string;
  dateOfBirth?: string;
}

export async function searchPatients(
  tx: Tx,
  workspaceId: string,
  q: string | undefined,
  limit: number,
  before?: string,
  exact: ExactPatientFilter = {},
) {
  const term = q ? `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  // A date of birth (YYYY-MM-DD) is matched exactly; names also as "given family" and "family, given".
  const birthDate = q && isCalendarDate(q) ? q : undefined;
  return tx
    .select()
    .from(patients)
    .where(
      and(
        eq(patients.workspaceId, workspaceId),
        term
          ? or(
              ilike(patients.givenName, term),
              ilike(patients.familyName, term),
              ilike(patients.mrn, term),
              sql`(${patients.givenName} || ' ' || ${patients.familyName}) ILIKE ${term}`,
              sql`(${patients.familyName} || ', ' || ${patients.givenName}) ILIKE ${term}`,
              birthDate ? eq(patients.dateOfBirth, birthDate) : undefined,
              eq(patients.id, q!),
            )
          : undefined,
        exact.givenName ? sql`lower(${patients.givenName}) = lower(${exact.givenName})` : undefined,
        exact.familyName ? sql`lower(${patients.familyName}) = lower(${exact.familyName})` : undefined,
        exact.dateOfBirth ? eq(patients.dateOfBirth, exact.dateOfBirth) : undefined,
        before ? lt(patients.id, before) : undefined,
      ),
    )
    .orderBy(desc(patients.id))
    .limit(limit + 1);
}

export async function updatePatient(
  tx: Tx,
  workspaceId: string,
  id: string,
  patch: Partial<typeof patients.$inferInsert>,
): Promise<PatientRow | undefined> {
  const [row] = await tx
    .update(patients)
    .set({ ...patch, updatedAt: new Date() })
    .where(and(eq(patients.workspaceId, workspaceId), eq(patients.id, id)))
    .returning();
  return row;
}

export async function insertAuthorization(tx: Tx, row: typeof patientAuthorizations.$inferInsert) {
  const [created] = await tx.insert(patientAuthorizations).values(row).returning();
  return created;
}

export async function listAuthorizations(tx: Tx, workspaceId: string, patientId: string): Promise<AuthorizationRow[]> {
  return tx
    .select()
    .from(patientAuthorizations)
    .where(and(eq(patientAuthorizations.workspaceId, workspaceId), eq(patientAuthorizations.patientId, patientId)))
    .orderBy(asc(patientAuthorizations.validFrom));
}

export async function insertCoverage(tx: Tx, row: typeof patientCoverages.$inferInsert): Promise<CoverageRow> {
  const [created] = await tx.insert(patientCoverages).values(row).returning();
  return created;
}

/** A patient's coverages, latest effective first. */
export async function listCoverages(tx: Tx, workspaceId: string, patientId: string): Promise<CoverageRow[]> {
  return tx
    .select()
    .from(patientCoverages)
    .where(and(eq(patientCoverages.workspaceId, workspaceId), eq(patientCoverages.patientId, patientId)))
    .orderBy(desc(patientCoverages.effectiveFrom), desc(patientCoverages.id));
}

export async function updateCoverage(
  tx: Tx,
  workspaceId: string,
  id: string,
  patch: Partial<typeof patientCoverages.$inferInsert>,
): Promise<CoverageRow> {
  const [row] = await tx
    .update(patientCoverages)
    .set(patch)
    .where(and(eq(patientCoverages.workspaceId, workspaceId), eq(patientCoverages.id, id)))
    .returning();
  return row;
}
