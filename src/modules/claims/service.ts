import { z } from 'zod';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { withTenant } from '../../platform/db/tenant.js';
import { conflict, notFound, unprocessable } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js';
import type { AppDeps } from '../../platform/types.js';
import { findNote } from '../notes/index.js';
import { patientExists } from '../patients/index.js';
import * as repo from './repository.js';
import type { AdjudicateInput, Claim, CreateClaimInput } from './schema.js';

export function presentClaim(c: repo.ClaimRow): Claim {
  return {
    id: c.id,
    patientId: c.patientId,
    noteId: c.noteId,
    payer: c.payer,
    serviceDate: c.serviceDate,
    codes: c.codes,
    amountCents: c.amountCents,
    status: c.status,
    paidAmountCents: c.paidAmountCents,
    denialReason: c.denialReason,
    submittedBy: c.submittedBy,
    submittedAt: c.submittedAt.toISOString(),
    adjudicatedAt: c.adjudicatedAt?.toISOString() ?? null,
  };
}

async function requireClaim(tx: Tx, ctx: RequestContext, id: string): Promise<repo.ClaimRow> {
  const claim = await repo.findClaim(tx, ctx.workspaceId, id);
  if (!claim) throw notFound('Claim');
  return claim;
}

/** Event payload: what a billing system needs, without clinical content. */
const eventData = (c: Claim) => ({
  claimId: c.id,
  patientId: c.patientId,
  payer: c.payer,
  amountCents: c.amountCents,
  codes: c.codes,
  status: c.status,
  paidAmountCents: c.paidAmountCents,
  denialReason: c.denialReason,
});

export async function submitClaim(deps: AppDeps, ctx: RequestContext, input: CreateClaimInput): Promise<Claim> {
  return withTenant(deps.db, ctx, async (tx) => {
    if (!(await patientExists(tx, ctx.workspaceId, input.patientId))) {
      throw unprocessable('unknown_patient', 'patientId is not a patient of this workspace', {
        errors: [{ path: 'body.patientId', message: 'Unknown patient' }],
      });
    }
    if (input.noteId) {
      const note = await findNote(tx, ctx, input.noteId);
      if (!note || note.patientId !== input.patientId) {
        throw unprocessable('unknown_note', 'noteId is not a note of this patient', {
          errors: [{ path: 'body.noteId', message: 'Unknown note for this patient' }],
        });
      }
    }
    const row = await repo.insertClaim(tx, {
      workspaceId: ctx.workspaceId,
      id: newId('clm'),
      patientId: input.patientId,
      noteId: input.noteId ?? null,
      payer: input.payer,
      serviceDate: input.serviceDate ?? null,
      codes: input.codes,
      amountCents: input.amountCents,
      submittedBy: ctx.userId,
    });
    const claim = presentClaim(row);
    await publishEvent(tx, ctx, 'claim.submitted', eventData(claim));
    return claim;
  });
}

export async function getClaim(deps: AppDeps, ctx: RequestContext, id: string): Promise<Claim> {
  return withTenant(deps.db, ctx, async (tx) => presentClaim(await requireClaim(tx, ctx, id)));
}

export async function listClaims(
  deps: AppDeps,
  ctx: RequestContext,
  query: { patientId?: string; status?: Claim['status']; limit: number; cursor?: string },
): Promise<Page<Claim>> {
  const before = decodeCursor(query.cursor, z.string());
  const rows = await withTenant(deps.db, ctx, (tx) => repo.listClaims(tx, ctx.workspaceId, { ...query, before }));
  const page = toPage(rows, query.limit, (r) => r.id);
  return { items: page.items.map(presentClaim), nextCursor: page.nextCursor };
}

/** Records the payer's decision once (emits claim.paid or claim.denied in the same transaction). */
export async function adjudicateClaim(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  input: AdjudicateInput,
): Promise<Claim> {
  return withTenant(deps.db, ctx, async (tx) => {
    const existing = await requireClaim(tx, ctx, id);
    const paid = input.outcome === 'paid';
    // A payer pays at most what was billed; more is a typo (cents for dollars), not a remittance.
    if (paid && input.paidAmountCents !== undefined && input.paidAmountCents > existing.amountCents) {
      const detail = `paidAmountCents (${input.paidAmountCents}) is more than the claim's billed amountCents (${existing.amountCents})`;
      throw unprocessable('invalid_amount', detail, {
        errors: [{ path: 'body.paidAmountCents', message: `At most the billed amount, ${existing.amountCents} cents` }],
      });
    }
    const row = await repo.adjudicateClaim(tx, ctx.workspaceId, id, {
      status: input.outcome,
      paidAmountCents: paid ? (input.paidAmountCents ?? existing.amountCents) : null,
      denialReason: paid ? null : (input.reason ?? null),
    });
    if (!row) throw conflict(`The claim was already ${existing.status}`, { claimStatus: existing.status });
    const claim = presentClaim(row);
    await publishEvent(tx, ctx, paid ? 'claim.paid' : 'claim.denied', eventData(claim));
    return claim;
  });
}

/** The patient's latest claims, newest first (what a skill with billing:read sees). */
export async function recentClaims(
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  limit: number,
): Promise<Claim[]> {
  const rows = await withTenant(deps.db, ctx, (tx) =>
    repo.recentClaimsOfPatient(tx, ctx.workspaceId, patientId, limit),
  );
  return rows.map(presentClaim);
}
