// Payments: a front desk asks a patient to pay (a copay, a no-show fee) through a hosted checkout
// page; the provider's webhook, verified by its Stripe-Signature on the raw bytes, marks the payment
// paid once the money arrived (receiveWebhook). Checkout creation goes through platform/upstream.
import { and, desc, eq, sql } from 'drizzle-orm';
import { countAccepted, countRefused } from '../../platform/acceptance.js';
import { writeAudit } from '../../platform/audit/audit.js';
import type { RequestContext } from '../../platform/context.js';
import { withSystem, withTenant } from '../../platform/db/tenant.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  decodeCursor,
  exactTime,
  olderThanCursor,
  type Page,
  timeIdCursor,
  toPage,
} from '../../platform/pagination.js';
import type { AppDeps } from '../../platform/types.js';
import { createUpstream, UpstreamError } from '../../platform/upstream/index.js';
import { patientExists } from '../patients/index.js';
import { resolvePayments, verifyStripeSignature } from './stripe.js';
import { payments } from './tables.js';

/** The acceptance source of the payments webhook (`payments:webhook-ingress`). */
export const WEBHOOK_SOURCE = 'webhook:payments';

const stripe = createUpstream({ name: 'payments', timeoutMs: 10_000, retries: 0, breaker: { consecutiveFailures: 5 } });

type Row = typeof payments.$inferSelect;
const present = (r: Row) => ({
  id: r.id,
  patientId: r.patientId,
  description: r.description,
  amountCents: r.amountCents,
  currency: r.currency,
  status: r.status,
  checkoutUrl: r.checkoutUrl,
  createdAt: r.createdAt.toISOString(),
  paidAt: r.paidAt?.toISOString() ?? null,
});

/** A provider's machine code or parameter name (`amount_too_small`, `line_items[0][price_data][currency]`). */
const MACHINE_WORD = /^[a-z0-9_.[\]]{1,80}$/;

const unavailable = () =>
  new AppError('unavailable', 503, 'Payments are not configured (no Stripe keys and emulators off)');

/** Creates a Checkout Session at the provider (form-encoded, as Stripe takes it). */
export async function createCheckoutSession(
  deps: AppDeps,
  input: { amountCents: number; currency: string; description: string; reference: string },
  signal?: AbortSignal,
): Promise<{ id: string; url: string }> {
  const provider = resolvePayments(deps);
  if (!provider) throw unavailable();
  const res = await stripe.request({
    method: 'POST',
    url: `${provider.apiBase}/v1/checkout/sessions`,
    headers: { authorization: `Bearer ${provider.secretKey}` },
    form: {
      mode: 'payment',
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': input.currency,
      'line_items[0][price_data][unit_amount]': String(input.amountCents),
      'line_items[0][price_data][product_data][name]': input.description,
      client_reference_id: input.reference,
      success_url: `${deps.selfUrl()}/payments/thanks`,
      cancel_url: `${deps.selfUrl()}/payments/cancelled`,
    },
    signal,
  });
  const body = res.json<{ id?: string; url?: string; error?: { code?: unknown; type?: unknown; param?: unknown } }>();
  if (!res.ok || !body.id || !body.url) {
    // Stripe's message quotes what it was sent (the description names the patient: "Copay for Jane Doe"), and a
    // 5xx problem is logged: only its machine words (`amount_too_small`, `invalid_request_error`, the parameter's
    // name) are passed on (contract §1, convention 16).
    const words = [body.error?.code ?? body.error?.type, body.error?.param].filter(
      (w): w is string => typeof w === 'string' && MACHINE_WORD.test(w),
    );
    throw new AppError(
      'provider_refused',
      502,
      `The payments provider refused the checkout (HTTP ${res.status}${words.length ? `: ${words.join(', ')}` : ''})`,
    );
  }
  return { id: body.id, url: body.url };
}

export async function requestPayment(
  deps: AppDeps,
  ctx: RequestContext,
  input: { amountCents: number; currency: string; description: string; patientId?: string },
) {
  if (input.patientId) {
    const known = await withTenant(deps.db, ctx, (tx) => patientExists(tx, ctx.workspaceId, input.patientId!));
    if (!known) throw new AppError('unknown_patient', 422, 'No such patient in this workspace');
  }
  const id = newId('pay');
  let session: { id: string; url: string };
  try {
    session = await createCheckoutSession(deps, { ...input, reference: id });
  } catch (err) {
    if (err instanceof UpstreamError)
      throw new AppError('provider_unavailable', 502, `The payments provider could not be reached (${err.kind})`);
    throw err;
  }
  const [row] = await withTenant(deps.db, ctx, async (tx) => {
    const inserted = await tx
      .insert(payments)
      .values({
        workspaceId: ctx.workspaceId,
        id,
        patientId: input.patientId ?? null,
        description: input.description,
        amountCents: input.amountCents,
        currency: input.currency,
        providerSessionId: session.id,
        checkoutUrl: session.url,
        createdBy: ctx.userId,
      })
      .returning();
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'payment.requested',
      paymentId: id,
      amountCents: input.amountCents,
      ...(input.patientId ? { patientId: input.patientId } : {}),
    });
    return inserted;
  });
  return present(row);
}

/** Newest first, paged by keyset on (created, id). */
export async function listPayments(
  deps: AppDeps,
  ctx: RequestContext,
  query: { patientId?: string; limit: number; cursor?: string },
): Promise<Page<ReturnType<typeof present>>> {
  const after = decodeCursor(query.cursor, timeIdCursor);
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select({ payment: payments, key: exactTime(payments.createdAt) })
      .from(payments)
      .where(
        and(
          eq(payments.workspaceId, ctx.workspaceId),
          query.patientId ? eq(payments.patientId, query.patientId) : undefined,
          olderThanCursor(payments.createdAt, payments.id, after),
        ),
      )
      .orderBy(desc(payments.createdAt), desc(payments.id))
      .limit(query.limit + 1),
  );
  const page = toPage(rows, query.limit, (r) => [r.key, r.payment.id]);
  return { items: page.items.map((r) => present(r.payment)), nextCursor: page.nextCursor };
}

/**
 * The provider's webhook: 401 and nothing changed unless Stripe-Signature verifies over the raw
 * bytes. A payment is marked paid (once; a retry changes nothing) by `checkout.session.completed`
 * whose `payment_status` is `paid`, or by `checkout.session.async_payment_succeeded`. A completed
 * session that is still `unpaid` is a delayed method (bank debit) whose money has not arrived: it
 * stays open until the async outcome. `checkout.session.async_payment_failed` changes nothing either:
 * payments have no failed status (open, paid, expired), so it stays open, not paid (README).
 */
export async function receiveWebhook(
  deps: AppDeps,
  raw: Buffer,
  signature: string | undefined,
  /** The client address (a refusal counts against the ingress probe per client network). */
  from: string,
) {
  const provider = resolvePayments(deps);
  if (!provider) throw unavailable();
  if (!verifyStripeSignature(signature, raw, provider.webhookSecret)) {
    // Unsigned calls are anyone's; a signature that does not verify is the provider out of step.
    if (signature) countRefused(deps, WEBHOOK_SOURCE, from);
    throw new AppError('unauthenticated', 401, 'The request is not signed by the payments provider');
  }
  let event: { type?: string; data?: { object?: { id?: string; payment_status?: string } } };
  try {
    event = JSON.parse(raw.toString('utf8'));
  } catch {
    countRefused(deps, WEBHOOK_SOURCE, from);
    throw new AppError('malformed_payload', 400, 'The body is not JSON');
  }
  countAccepted(deps, WEBHOOK_SOURCE);
  const session = event?.data?.object;
  if (typeof session?.id !== 'string' || !isPaidEvent(event.type, session.payment_status)) return { handled: false };
  // Cross-tenant by design: the provider names the session; its workspace comes from the row.
  const updated = await withSystem(deps.db, (tx) =>
    tx
      .update(payments)
      .set({ status: 'paid', paidAt: sql`now()` })
      .where(and(eq(payments.providerSessionId, session.id!), eq(payments.status, 'open')))
      .returning({ id: payments.id }),
  );
  return { handled: updated.length > 0 };
}

/** Whether the event says the money arrived (not merely that the checkout was completed). */
function isPaidEvent(type: string | undefined, paymentStatus: string | undefined): boolean {
  // `no_payment_required`: nothing was owed once discounts applied (a fully discounted checkout) — settled.
  if (type === 'checkout.session.completed') return paymentStatus === 'paid' || paymentStatus === 'no_payment_required';
  return type === 'checkout.session.async_payment_succeeded';
}
