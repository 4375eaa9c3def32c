import { and, asc, desc, eq, getTableColumns, ilike, inArray, lt, or, type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { queryRows } from '../../platform/db/tenant.js';
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

/**
 * The patient, its row locked until the transaction ends (FOR NO KEY UPDATE: rows referencing the patient can
 * still be added meanwhile), so changes of the patient's coverage run one after another: each reads what the
 * one before it wrote.
 */
export async function lockPatient(tx: Tx, workspaceId: string, id: string): Promise<PatientRow | undefined> {
  const [row] = await tx
    .select()
    .from(patients)
    .where(and(eq(patients.workspaceId, workspaceId), eq(patients.id, id)))
    .for('no key update');
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
 * Up to `limit` of the workspace's patients whose name ("given family") has a word of `text` as full-text
 * search reads words: `to_tsvector('english', …)` on both sides (stemmed, stop words dropped, case ignored,
 * accents kept). Other modules' full-text searches use it to find a patient by name (direct-message search).
 * A scan of the workspace's patients, as the name search above is.
 */
export async function findPatientsByNameWords(
  tx: Tx,
  workspaceId: string,
  text: string,
  limit: number,
): Promise<PatientRow[]> {
  // Any of the words: plainto_tsquery joins the lexemes with '&', turned into '|'. Lexemes are quoted in the
  // query's text form, and the parser never keeps ' & ' inside one. The name expression is the one the GIN index
  // patients_name_words_idx (migration 0044) is built on, so the search does not read every patient.
  const anyWord = sql`replace(plainto_tsquery('english'::regconfig, ${text}::text)::text, ' & ', ' | ')::tsquery`;
  return tx
    .select()
    .from(patients)
    .where(
      and(
        eq(patients.workspaceId, workspaceId),
        sql`to_tsvector('english'::regconfig, ${patients.givenName} || ' ' || ${patients.familyName}) @@ ${anyWord}`,
      ),
    )
    .orderBy(desc(patients.id))
    .limit(limit);
}

/**
 * `YYYY-MM-DD` naming a real day PostgreSQL can hold (2026-02-30 is not one, nor is 0000-01-01:
 * neither may reach a date comparison).
 */
function isCalendarDate(value: string): boolean {
  return daySchema.safeParse(value).success;
}

/**
 * The birth date a search term names, as `YYYY-MM-DD`: written as stored (1958-03-14), as the US front desk
 * writes it (03/14/1958, 3/14/1958: month first) or year first with slashes (1958/03/14); else undefined.
 */
export function birthDateOf(term: string): string | undefined {
  const pad = (n: string) => n.padStart(2, '0');
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(term);
  const yearFirst = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(term);
  const day = us
    ? `${us[3]}-${pad(us[1])}-${pad(us[2])}`
    : yearFirst
      ? `${yearFirst[1]}-${pad(yearFirst[2])}-${pad(yearFirst[3])}`
      : undefined;
  return day && isCalendarDate(day) ? day : undefined;
}

/**
 * Exact matches for the duplicate check before a patient is registered. Names are compared folded
 * (no accents, no case: "Jose Muller" finds "José Müller"), as the database's atrium_fold_name does it.
 */
export interface ExactPatientFilter {
  givenName?: string;
  familyName?: string;
  dateOfBirth?: string;
}

/**
 * Where a search page ends. A search with a term is ranked: the cursor is `[rank, id]` (rank 0 best,
 * see `searchPatients`). A list without a term, and a search continued from a cursor of the earlier
 * kind (the last id alone, from before ranking), are newest first and the cursor is the last id.
 */
export type SearchCursor = string | [number, string];
export const MAX_RANK = 3;

/** Whether a search with this term, continued from this cursor, is ranked (else newest first). */
export const isRanked = (q: string | undefined, after: SearchCursor | undefined): boolean =>
  q !== undefined && typeof after !== 'string';

/** The values folded by the database (atrium_fold_name), so a term folds exactly as the stored names. */
async function fold<K extends string>(
  tx: Tx,
  values: Record<K, string | undefined>,
): Promise<Record<K, string | null>> {
  const keys = Object.keys(values) as K[];
  const [row] = await queryRows<Record<K, string | null>>(
    tx,
    sql`SELECT ${sql.join(
      keys.map((k) => sql`atrium_fold_name(${values[k] ?? null}::text) AS ${sql.identifier(k)}`),
      sql`, `,
    )}`,
  );
  return row;
}

const likeEscape = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A page of the workspace's patients (limit + 1 rows, for the next cursor), each with its `rank`.
 *
 * `q` matches names (folded, see ExactPatientFilter: as "given family", "family, given" or "family
 * given"), the MRN (as typed, ignoring case), an exact date of birth (birthDateOf: 1958-03-14, 03/14/1958,
 * 3/14/1958, 1958/03/14) or the id. Matches are ranked:
 * 0 the full name, the MRN or the id exactly; 1 the given or the family name exactly, or the date of
 * birth; 2 a name word (or the name as "family, given", or the MRN) starting with the term; 3 the term
 * elsewhere. Newest first within a rank. A match is a scan of the workspace's rows, as ILIKE was; the
 * folded keys make each comparison a plain LIKE.
 */
export async function searchPatients(
  tx: Tx,
  workspaceId: string,
  q: string | undefined,
  limit: number,
  after?: SearchCursor,
  exact: ExactPatientFilter = {},
) {
  const folded =
    q !== undefined || exact.givenName || exact.familyName
      ? await fold(tx, { q, given: exact.givenName, family: exact.familyName })
      : { q: null, given: null, family: null };
  // A term that folds to nothing ("’") matches no name (not every name).
  const nameTerm = folded.q || undefined;
  const birthDate = q ? birthDateOf(q) : undefined;
  const full = sql`(${patients.givenNameKey} || ' ' || ${patients.familyNameKey})`;
  const byFamily = sql`(${patients.familyNameKey} || ', ' || ${patients.givenNameKey})`;
  const byFamilyNoComma = sql`(${patients.familyNameKey} || ' ' || ${patients.givenNameKey})`;
  const n = nameTerm ? likeEscape(nameTerm) : '';
  const m = q ? likeEscape(q) : '';

  const matches =
    q !== undefined
      ? (or(
          nameTerm ? sql`${full} LIKE ${`%${n}%`}` : undefined,
          nameTerm ? sql`${byFamily} LIKE ${`%${n}%`}` : undefined,
          nameTerm ? sql`${byFamilyNoComma} LIKE ${`%${n}%`}` : undefined,
          ilike(patients.mrn, `%${m}%`),
          birthDate ? eq(patients.dateOfBirth, birthDate) : undefined,
          eq(patients.id, q),
        ) as SQL)
      : undefined;

  const ranked = isRanked(q, after);
  const rank = ranked
    ? sql<number>`CASE
        WHEN ${or(
          nameTerm ? sql`${full} = ${nameTerm}` : undefined,
          nameTerm ? sql`${byFamily} = ${nameTerm}` : undefined,
          nameTerm ? sql`${byFamilyNoComma} = ${nameTerm}` : undefined,
          ilike(patients.mrn, m),
          eq(patients.id, q!),
        )} THEN 0
        WHEN ${or(
          nameTerm ? eq(patients.givenNameKey, nameTerm) : undefined,
          nameTerm ? eq(patients.familyNameKey, nameTerm) : undefined,
          birthDate ? eq(patients.dateOfBirth, birthDate) : sql`false`,
        )} THEN 1
        WHEN ${or(
          nameTerm ? sql`(' ' || ${full}) LIKE ${`% ${n}%`}` : undefined,
          nameTerm ? sql`${byFamily} LIKE ${`${n}%`}` : undefined,
          nameTerm ? sql`${byFamilyNoComma} LIKE ${`${n}%`}` : undefined,
          ilike(patients.mrn, `${m}%`),
        )} THEN 2
        ELSE 3 END`.mapWith(Number)
    : sql<number>`0`.mapWith(Number);

  let page: SQL | undefined;
  if (Array.isArray(after) && ranked) {
    page = sql`(${rank} > ${after[0]} OR (${rank} = ${after[0]} AND ${patients.id} < ${after[1]}))`;
  } else if (after !== undefined) {
    page = lt(patients.id, Array.isArray(after) ? after[1] : after);
  }

  return tx
    .select({ ...getTableColumns(patients), rank })
    .from(patients)
    .where(
      and(
        eq(patients.workspaceId, workspaceId),
        matches,
        exact.givenName ? eq(patients.givenNameKey, folded.given ?? '') : undefined,
        exact.familyName ? eq(patients.familyNameKey, folded.family ?? '') : undefined,
        exact.dateOfBirth ? eq(patients.dateOfBirth, exact.dateOfBirth) : undefined,
        page,
      ),
    )
    .orderBy(...(ranked ? [asc(rank), desc(patients.id)] : [desc(patients.id)]))
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

/** Removes coverages never on file before the day they are superseded on (set that same day, by someone's clock). */
export async function deleteCoverages(tx: Tx, workspaceId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx
    .delete(patientCoverages)
    .where(and(eq(patientCoverages.workspaceId, workspaceId), inArray(patientCoverages.id, ids)));
}
