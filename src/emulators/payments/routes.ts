// Payments emulator: Stripe-style Checkout Sessions (`POST /v1/checkout/sessions`, form-encoded,
// bearer secret key; `GET /v1/checkout/sessions/:id`), a hosted page per session, and `POST
// /sessions/:id/pay` which completes it and sends `checkout.session.completed` to the app's webhook
// signed as Stripe signs (`Stripe-Signature: t=…,v1=…`). Fault operations `sessions.create`, `webhook`.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { EMULATOR_SECRET_KEY, EMULATOR_WEBHOOK_SECRET, signPayload } from '../../modules/payments/index.js';
import { readDoc, updateDoc } from '../calendar/store.js';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';

interface Session {
  id: string;
  status: 'open' | 'complete';
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  created: number;
}

export async function paymentsEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  const db = () => fastify.atrium.db;
  const stripeError = (reply: FastifyReply, status: number, message: string, type = 'invalid_request_error') =>
    reply.status(status).send({ error: { type, message } });
  const urlOf = (id: string) => `${fastify.atrium.selfUrl()}/_emulators/payments/pay/${id}`;

  fastify.post(
    '/v1/checkout/sessions',
    { schema: { hide: true }, config: { formBody: true } },
    async (request, reply) => {
      if (request.headers.authorization !== `Bearer ${EMULATOR_SECRET_KEY}`) {
        return stripeError(reply, 401, 'Invalid API Key provided', 'authentication_error');
      }
      const f = await applyFault(faults, 'sessions.create');
      if (f) return reply.status(f.status!).send(f.body ?? { error: { type: 'api_error', message: 'Injected fault' } });
      const form = (request.body ?? {}) as Record<string, string>;
      const amount = Number(form['line_items[0][price_data][unit_amount]']);
      const quantity = Number(form['line_items[0][quantity]'] ?? 1);
      if (form.mode !== 'payment' || !Number.isInteger(amount) || amount < 50) {
        return stripeError(reply, 400, 'Missing required param: line_items[0][price_data][unit_amount].');
      }
      const session: Session = {
        id: `cs_test_${randomBytes(24).toString('base64url')}`,
        status: 'open',
        payment_status: 'unpaid',
        amount_total: amount * quantity,
        currency: (form['line_items[0][price_data][currency]'] ?? 'usd').toLowerCase(),
        client_reference_id: form.client_reference_id ?? null,
        created: Math.floor(Date.now() / 1000),
      };
      await updateDoc(
        db(),
        'payments',
        `session:${session.id}`,
        () => session,
        () => undefined,
      );
      return { object: 'checkout.session', ...session, url: urlOf(session.id) };
    },
  );

  fastify.get('/v1/checkout/sessions/:id', { schema: { hide: true } }, async (request, reply) => {
    const session = await readDoc<Session>(db(), 'payments', `session:${(request.params as { id: string }).id}`);
    if (!session) return stripeError(reply, 404, 'No such checkout.session');
    return { object: 'checkout.session', ...session, url: urlOf(session.id) };
  });

  fastify.get('/pay/:id', { schema: { hide: true } }, async (request, reply) =>
    reply
      .type('text/html')
      .send(
        `<!doctype html><title>Checkout (emulated)</title><h1>Pay</h1><p>The local payments emulator’s stand-in for a hosted checkout page (session ${String((request.params as { id: string }).id).replace(/[^\w]/g, '')}).</p>`,
      ),
  );

  /** The patient pays: the session completes and the app hears about it through its webhook. */
  fastify.post('/sessions/:id/pay', { schema: { hide: true } }, async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const found = await readDoc<Session>(db(), 'payments', `session:${id}`);
    if (!found) return stripeError(reply, 404, 'No such checkout.session');
    const session = await updateDoc(
      db(),
      'payments',
      `session:${id}`,
      () => found,
      (s: Session) => {
        Object.assign(s, { status: 'complete', payment_status: 'paid' });
        return { ...s };
      },
    );
    const f = await applyFault(faults, 'webhook');
    if (f) return { delivered: false, status: f.status };
    const body = JSON.stringify({
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: { object: { object: 'checkout.session', ...session } },
    });
    const t = Math.floor(Date.now() / 1000);
    const res = await fetch(`${fastify.atrium.selfUrl()}/api/v1/payments/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': `t=${t},v1=${signPayload(EMULATOR_WEBHOOK_SECRET, t, body)}`,
      },
      body,
    });
    return { delivered: res.ok, status: res.status };
  });
}
