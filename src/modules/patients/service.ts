import { z } from 'zod';
import { auditPhiShown, writeAudit } from '../../platform/audit/audit.js';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound, unprocessable } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueMail } from '../../platform/mail/mailer.js';
import { decodeCursor, toPage } from '../../platform/pagination.js';
import type { AppDeps } from '../../platform/types.js';
import { adminEmails, isMember, userNames } from '../identity/index.js';
import * as repo from './repository.js';
import type {
  AuthorizationInput,
  Coverage,
  CoverageInput,
  CreatePatientInput,
  PatchPatientInput,
  Patient,
} from './schema.js';
import { utcDay } from './schema.js';

export function presentPatient(p: repo.PatientRow): Patient {
  return {
    id: p.id,
    givenName: p.givenName,
    familyName: p.familyName,
    dateOfBirth: p.dateOfBirth,
    mrn: p.mrn,
    preferredProviderId: p.preferredProviderId,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/**
 * How many units of each authorization are used: the module that books sessions from them
 * (calendar) registers this in its init (patients cannot import it: calendar depends on patients).
 */
export type AuthorizationUsage = (
  tx: Tx,
  workspaceId: string,
  authorizationIds: string[],
) => Promise<Map<string, number>>;
let authorizationUsage: AuthorizationUsage | undefined;
export function registerAuthorizationUsage(usage: AuthorizationUsage): void {
  authorizationUsage = usage;
}

const presentAuthorization = (a: repo.AuthorizationRow, used: Map<string, number>) => ({
  id: a.id,
  patientId: a.patientId,
  service: a.service,
  units: a.units,
  unitMinutes: a.unitMinutes,
  validFrom: a.validFrom,
  validTo: a.validTo,
  unitsUsed: used.get(a.id) ?? 0,
  createdAt: a.createdAt.toISOString(),
});

const usageOf = async (tx: Tx, workspaceId: string, rows: repo.AuthorizationRow[]) =>
  rows.length && authorizationUsage
    ? authorizationUsage(
        tx,
        workspaceId,
        rows.map((r) => r.id),
      )
    : new Map<string, number>();

async function checkProvider(tx: Tx, ctx: RequestContext, providerId: string | null | undefined) {
  if (providerId && !(await isMember(tx, ctx.workspaceId, providerId, true))) {
    throw unprocessable('unknown_provider', 'preferredProviderId is not a provider of this workspace', {
      errors: [{ path: 'body.preferredProviderId', message: 'Not a provider in this workspace' }],
    });
  }
}

const mrnTaken = () =>
  new AppError('mrn_taken', 409, 'Another patient of this workspace already has this MRN', {
    errors: [{ path: 'body.mrn', message: 'This MRN is already used by another patient' }],
  });

/** Runs a write that may set an MRN; the unique index turns a duplicate (also a concurrent one) into 409 mrn_taken. */
async function mapMrnTaken<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (repo.isUniqueViolation(error, repo.MRN_UNIQUE_INDEX)) throw mrnTaken();
    throw error;
  }
}

/** Loads a patient of the caller's workspace inside a transaction; 404 otherwise. */
export async function requirePatient(tx: Tx, ctx: Pick<RequestContext, 'workspaceId'>, id: string) {
  const patient = await repo.findPatient(tx, ctx.workspaceId, id);
  if (!patient) throw notFound('Patient');
  return patient;
}

/** `requirePatient`, the row locked until commit: the patient's coverage changes run one after another. */
async function lockCoverageOf(tx: Tx, ctx: Pick<RequestContext, 'workspaceId'>, id: string) {
  const patient = await repo.lockPatient(tx, ctx.workspaceId, id);
  if (!patient) throw notFound('Patient');
  return patient;
}

export async function createPatient(deps: AppDeps, ctx: RequestContext, input: CreatePatientInput): Promise<Patient> {
  return mapMrnTaken(() =>
    withTenant(deps.db, ctx, async (tx) => {
      await checkProvider(tx, ctx, input.preferredProviderId);
      const row = await repo.insertPatient(tx, {
        workspaceId: ctx.workspaceId,
        id: newId('pat'),
        givenName: input.givenName,
        familyName: input.familyName,
        dateOfBirth: input.dateOfBirth ?? null,
        mrn: input.mrn ?? null,
        preferredProviderId: input.preferredProviderId ?? null,
      });
      const patient = presentPatient(row);
      await publishEvent(tx, ctx, 'patient.created', { patient });
      return patient;
    }),
  );
}

export async function getPatient(deps: AppDeps, ctx: RequestContext, id: string): Promise<Patient> {
  return withTenant(deps.db, ctx, async (tx) => presentPatient(await requirePatient(tx, ctx, id)));
}

/**
 * A person opening a patient's record (`GET /patients/:id`): the record, and one `phi_access` row
 * (context `patients.record`) per reader and patient per hour, so the trail shows who looked at the
 * chart without a row for every refresh. The row commits with the read.
 */
export async function readPatientRecord(deps: AppDeps, ctx: RequestContext, id: string): Promise<Patient> {
  return withTenant(deps.db, ctx, async (tx) => {
    const patient = await requirePatient(tx, ctx, id);
    await auditPhiShown(tx, ctx, [patient.id], 'patients.record');
    return presentPatient(patient);
  });
}

/** A search cursor: `[rank, id]` of a ranked search, or an id (lists without a term, and earlier cursors). */
const searchCursor = z.union([z.string(), z.tuple([z.number().int().min(0).max(repo.MAX_RANK), z.string()])]);

/**
 * GET /patients: a search (`q`, ranked: best matches first) or the list (newest first), with the
 * duplicate check's exact filters; names compare without accents and case (repository.searchPatients).
 */
export async function listPatients(
  deps: AppDeps,
  ctx: RequestContext,
  query: { q?: string; limit: number; cursor?: string } & repo.ExactPatientFilter,
) {
  const after = decodeCursor(query.cursor, searchCursor);
  const q = query.q || undefined;
  const { givenName, familyName, dateOfBirth } = query;
  const rows = await withTenant(deps.db, ctx, (tx) =>
    repo.searchPatients(tx, ctx.workspaceId, q, query.limit, after, { givenName, familyName, dateOfBirth }),
  );
  const ranked = repo.isRanked(q, after);
  const page = toPage(rows, query.limit, (r) => (ranked ? [r.rank, r.id] : r.id));
  return { items: page.items.map(presentPatient), nextCursor: page.nextCursor };
}

export async function patchPatient(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  patch: PatchPatientInput,
): Promise<Patient> {
  return mapMrnTaken(() =>
    withTenant(deps.db, ctx, async (tx) => {
      await requirePatient(tx, ctx, id);
      await checkProvider(tx, ctx, patch.preferredProviderId);
      const row = await repo.updatePatient(tx, ctx.workspaceId, id, patch);
      const patient = presentPatient(row!);
      await publishEvent(tx, ctx, 'patient.updated', { patient, changed: Object.keys(patch).sort() });
      return patient;
    }),
  );
}

export async function addAuthorization(
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  input: AuthorizationInput,
) {
  if (input.validFrom > input.validTo) {
    throw unprocessable('invalid_period', 'validFrom must not be after validTo', {
      errors: [{ path: 'body.validTo', message: 'Must be on or after validFrom' }],
    });
  }
  return withTenant(deps.db, ctx, async (tx) => {
    await requirePatient(tx, ctx, patientId);
    const row = await repo.insertAuthorization(tx, {
      workspaceId: ctx.workspaceId,
      id: newId('pau'),
      patientId,
      ...input,
    });
    return presentAuthorization(row, new Map());
  });
}

export async function listAuthorizations(deps: AppDeps, ctx: RequestContext, patientId: string) {
  return withTenant(deps.db, ctx, async (tx) => {
    await requirePatient(tx, ctx, patientId);
    const rows = await repo.listAuthorizations(tx, ctx.workspaceId, patientId);
    const used = await usageOf(tx, ctx.workspaceId, rows);
    return rows.map((row) => presentAuthorization(row, used));
  });
}

/** Emergency access: audited, announced to webhooks, and e-mailed to the admins in one transaction. */
export async function breakGlass(deps: AppDeps, ctx: RequestContext, patientId: string, reason: string) {
  return withTenant(deps.db, ctx, async (tx) => {
    const patient = presentPatient(await requirePatient(tx, ctx, patientId));
    const auditId = await writeAudit(tx, ctx, 'break_glass', { patientId, reason });
    const invokedAt = new Date().toISOString();
    await publishEvent(tx, ctx, 'break_glass.invoked', { patientId, reason, invokedBy: ctx.userId, invokedAt });
    // The subject names who, never the patient (subjects show in notifications and lists); the text says which
    // record, when in words, and links to exactly this in the audit log.
    const who = ctx.userId ? (await userNames(tx, [ctx.userId])).get(ctx.userId) : undefined;
    const by = who ?? 'Someone';
    const review = new URLSearchParams({ kind: 'break_glass', patientId });
    await enqueueMail(tx, ctx.workspaceId, {
      to: await adminEmails(tx, ctx.workspaceId),
      subject: `Break-glass access to a patient record by ${by}`,
      text: [
        `${by} used emergency (break-glass) access to a patient's record.`,
        '',
        `Patient: ${patient.givenName} ${patient.familyName} (${patient.id})`,
        `By: ${by}${ctx.userId ? ` (${ctx.userId})` : ''}`,
        `When: ${invokedAt.slice(0, 16).replace('T', ' ')} UTC`,
        `Reason: ${reason}`,
        '',
        `Review this access in the audit log: ${deps.selfUrl()}/admin/audit?${review}`,
      ].join('\n'),
    });
    return { id: auditId, patientId, reason, invokedBy: ctx.userId, invokedAt, patient };
  });
}

/** Whether a patient of the workspace exists, in the caller's transaction (modules linking records to patients). */
export async function patientExists(tx: Tx, workspaceId: string, id: string): Promise<boolean> {
  return (await repo.findPatient(tx, workspaceId, id)) !== undefined;
}

/** Display names ("given family") of the workspace's patients among `ids`; unknown ids are left out. */
export async function patientNames(tx: Tx, workspaceId: string, ids: string[]): Promise<Map<string, string>> {
  const patients = await repo.findPatientsByIds(tx, workspaceId, ids);
  return new Map(patients.map((p) => [p.id, `${p.givenName} ${p.familyName}`]));
}

/**
 * Display names of up to `limit` of the workspace's patients whose name has a word of `text` as PostgreSQL's
 * English full-text search reads it ("vance" finds Eleanor Vance; stemmed, stop words dropped): for modules
 * whose full-text search should find a patient by name. Newest patients first when more match.
 */
export async function patientsNamedByWords(
  tx: Tx,
  workspaceId: string,
  text: string,
  limit: number,
): Promise<Map<string, string>> {
  const patients = await repo.findPatientsByNameWords(tx, workspaceId, text, limit);
  return new Map(patients.map((p) => [p.id, `${p.givenName} ${p.familyName}`]));
}

const presentCoverage = (c: repo.CoverageRow): Coverage => ({
  id: c.id,
  patientId: c.patientId,
  payerName: c.payerName,
  payerId: c.payerId,
  memberId: c.memberId,
  groupNumber: c.groupNumber,
  planName: c.planName,
  effectiveFrom: c.effectiveFrom,
  effectiveTo: c.effectiveTo,
});

const shiftDay = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const isActiveOn = (c: { effectiveFrom: string; effectiveTo: string | null }, day: string) =>
  c.effectiveFrom <= day && (!c.effectiveTo || c.effectiveTo >= day);

/** A patient's coverages, latest effective first (the eligibility skill picks the one active on its date). */
export async function listCoverages(deps: AppDeps, ctx: RequestContext, patientId: string): Promise<Coverage[]> {
  return withTenant(deps.db, ctx, async (tx) =>
    (await repo.listCoverages(tx, ctx.workspaceId, patientId)).map(presentCoverage),
  );
}

/** Adds a coverage with explicit effective dates (skills under billing:write). */
export async function addCoverage(
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  input: CoverageInput & { effectiveFrom: string; effectiveTo?: string },
): Promise<Coverage> {
  return withTenant(deps.db, ctx, async (tx) => {
    await lockCoverageOf(tx, ctx, patientId);
    if (input.effectiveTo && input.effectiveTo < input.effectiveFrom) {
      throw new AppError('unprocessable', 422, 'effectiveTo is before effectiveFrom');
    }
    const row = await repo.insertCoverage(tx, {
      workspaceId: ctx.workspaceId,
      id: newId('cov'),
      patientId,
      payerId: input.payerId,
      payerName: input.payerName,
      memberId: input.memberId,
      groupNumber: input.groupNumber ?? null,
      planName: input.planName ?? null,
      effectiveFrom: input.effectiveFrom,
      effectiveTo: input.effectiveTo ?? null,
      createdBy: ctx.userId,
    });
    return presentCoverage(row);
  });
}

/**
 * The coverage on file today (the caller's `today`, else the UTC date): the one active that day, else the
 * latest (the one eligibility would use); 404 if none.
 */
export async function getCoverage(
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  today?: string,
): Promise<Coverage> {
  return withTenant(deps.db, ctx, async (tx) => {
    await requirePatient(tx, ctx, patientId);
    const rows = await repo.listCoverages(tx, ctx.workspaceId, patientId);
    const day = today ?? utcDay();
    const current = rows.find((c) => isActiveOn(c, day)) ?? rows[0];
    if (!current) throw notFound('Coverage');
    return presentCoverage(current);
  });
}

/**
 * Sets the patient's coverage from today, keeping history: a coverage that started today is corrected in
 * place, one that started earlier ends yesterday and a new one starts today. Today is the caller's own
 * date when sent (`input.today`, validated within a day of UTC), else the UTC date. Emits patient.updated
 * (changed: coverage) without the insurance details.
 */
export async function putCoverage(
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  input: CoverageInput,
): Promise<Coverage> {
  return withTenant(deps.db, ctx, async (tx) => {
    // Locked first, so PUTs at once run one after another (else each read the same rows and 2-4 of 8 left an
    // open coverage, or one updated a row another had just removed).
    const patient = presentPatient(await lockCoverageOf(tx, ctx, patientId));
    const day = input.today ?? utcDay();
    const rows = await repo.listCoverages(tx, ctx.workspaceId, patientId);
    // Coverage from `day` on replaces whatever is on file from then: one that started earlier ends the day before;
    // those starting on or after it (set today, by the caller's clock or one ahead of it: past midnight already,
    // or the UTC date before callers sent their own) were never on file before, so the newest is corrected in
    // place and any other goes, and no two coverages ever overlap.
    const active = rows.find((c) => isActiveOn(c, day) && c.effectiveFrom < day);
    const fromToday = rows.filter((c) => c.effectiveFrom >= day);
    const current = fromToday.find((c) => c.effectiveTo === null) ?? fromToday[0];
    const fields = {
      payerName: input.payerName,
      payerId: input.payerId,
      memberId: input.memberId,
      groupNumber: input.groupNumber ?? null,
      planName: input.planName ?? null,
    };
    let row: repo.CoverageRow;
    // The one on file before today ends yesterday.
    if (active) await repo.updateCoverage(tx, ctx.workspaceId, active.id, { effectiveTo: shiftDay(day, -1) });
    await repo.deleteCoverages(
      tx,
      ctx.workspaceId,
      fromToday.filter((c) => c !== current).map((c) => c.id),
    );
    if (current) {
      row = await repo.updateCoverage(tx, ctx.workspaceId, current.id, {
        ...fields,
        effectiveFrom: day,
        effectiveTo: null,
      });
    } else {
      row = await repo.insertCoverage(tx, {
        workspaceId: ctx.workspaceId,
        id: newId('cov'),
        patientId,
        ...fields,
        effectiveFrom: day,
        effectiveTo: null,
        createdBy: ctx.userId,
      });
    }
    await publishEvent(tx, ctx, 'patient.updated', { patient, changed: ['coverage'] });
    return presentCoverage(row);
  });
}
