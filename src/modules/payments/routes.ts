// Payments: ask a patient to pay through a hosted checkout page; the provider's webhook.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { listOf, pageQuery } from '../../platform/pagination.js';
import * as service from './service.js';

const paymentSchema = z.object({
  id: z.string(),
  patientId: z.string().nullable(),
  description: z.string(),
  amountCents: z.number().int(),
  currency: z.string(),
  status: z.enum(['open', 'paid', 'expired']),
  checkoutUrl: z.string().describe('Send this link to the patient'),
  createdAt: z.string(),
  paidAt: z.string().nullable(),
});

export async function paymentRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['payments'];

  app.post(
    '/payments',
    {
      schema: {
        tags,
        summary: 'Ask for a payment: a hosted checkout page (Stripe Checkout, or its emulator) to send the patient',
        body: z.object({
          amountCents: z.number().int().min(50).max(10_000_000),
          currency: z.enum(['usd', 'eur', 'gbp', 'cad']).default('usd'),
          description: z
            .string()
            .trim()
            .min(1)
            .max(200)
            .refine((s) => !s.includes('\u0000'), 'Must not contain NUL'),
          patientId: z.string().min(1, 'Give a patient id, or leave it out').max(100).optional(),
        }),
        response: { 201: paymentSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.requestPayment(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/payments',
    {
      schema: {
        tags,
        summary: 'Payments asked for, newest first; paged by `cursor`',
        querystring: pageQuery.extend({ patientId: z.string().max(100).optional() }),
        response: { 200: listOf(paymentSchema), ...problemResponses },
      },
    },
    async (request) => service.listPayments(deps, requireCtx(request), request.query),
  );

  await fastify.register(async (hooks) => {
    // The signature covers the exact bytes: keep them, parse after the check.
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 512 * 1024 }, (_request, body, done) =>
      done(null, body),
    );
    hooks.withTypeProvider<ZodTypeProvider>().post(
      '/payments/webhook',
      {
        config: { auth: 'public' },
        schema: {
          tags,
          summary: 'The payments provider’s webhook (Stripe-Signature verified on the raw body)',
          description:
            '`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(webhook secret, "<t>.<raw body>")>`, five minutes of tolerance. ' +
            '401 `unauthenticated` and nothing changes otherwise. `checkout.session.completed` with `payment_status: "paid"` ' +
            'and `checkout.session.async_payment_succeeded` mark the payment paid; a completed session still `unpaid` ' +
            '(a delayed payment method) and `checkout.session.async_payment_failed` leave it open (there is no failed status). ' +
            '`handled` says whether a payment changed.',
          response: { 200: z.object({ received: z.literal(true), handled: z.boolean() }), ...problemResponses },
        },
      },
      async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const header = request.headers['stripe-signature'];
        const result = await service.receiveWebhook(deps, raw, Array.isArray(header) ? header[0] : header, request.ip);
        return { received: true as const, ...result };
      },
    );
  });
}
