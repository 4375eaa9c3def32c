// Claims: insurance claims submitted per patient and adjudicated once (emits claim.submitted/paid/denied).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { idParams, problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import { adjudicateBody, claimSchema, createClaimBody, listClaimsQuery } from './schema.js';
import * as service from './service.js';

export async function claimRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['claims'];

  app.post(
    '/claims',
    {
      schema: {
        tags,
        summary: 'Submit a claim (emits claim.submitted)',
        description:
          'A claim bills a service already given: `serviceDate` (`YYYY-MM-DD`, optional) may not be after today in ' +
          'the timezone furthest ahead (UTC+14), else 400 `validation_failed`. An unknown patient is 422 ' +
          '`unknown_patient`; a `noteId` not of this patient 422 `unknown_note`.',
        body: createClaimBody,
        response: { 201: claimSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.submitClaim(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/claims',
    {
      schema: {
        tags,
        summary: 'Claims, newest first',
        querystring: listClaimsQuery,
        response: { 200: listOf(claimSchema), ...problemResponses },
      },
    },
    async (request) => service.listClaims(deps, requireCtx(request), request.query),
  );

  app.get(
    '/claims/:id',
    { schema: { tags, summary: 'One claim', params: idParams, response: { 200: claimSchema, ...problemResponses } } },
    async (request) => service.getClaim(deps, requireCtx(request), request.params.id),
  );

  app.post(
    '/claims/:id/adjudicate',
    {
      // Stands in for the payer's remittance advice: billing staff (admins) record it.
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "Record the payer's decision once (admins; emits claim.paid or claim.denied)",
        description:
          '`paid` with `paidAmountCents` (default: the billed `amountCents`), which may be less than billed but ' +
          'never more (422 `invalid_amount`, nothing stored); `denied` with an optional `reason`. A claim already ' +
          'adjudicated is 409 `conflict`.',
        params: idParams,
        body: adjudicateBody,
        response: { 200: claimSchema, ...problemResponses },
      },
    },
    async (request) => service.adjudicateClaim(deps, requireCtx(request), request.params.id, request.body),
  );
}
