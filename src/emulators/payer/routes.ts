// Payer emulator: a clearinghouse eligibility endpoint taking X12 270-shaped JSON and answering
// 271-shaped JSON by deterministic rules (see rules.ts). Fault operation: `eligibility`.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Eligibility270 } from '../../modules/skills/index.js';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';
import { adjudicate } from './rules.js';

const x12Date = z.string().regex(/^\d{8}$/);

const inquiry = z.object({
  transactionSetId: z.literal('270'),
  controlNumber: z.string().min(1).max(9),
  createdDate: x12Date,
  informationSource: z.object({ payerId: z.string().min(1), payerName: z.string().min(1) }),
  informationReceiver: z.object({ name: z.string(), identifier: z.string() }),
  subscriber: z.object({
    memberId: z.string().min(1),
    firstName: z.string().min(1),
    lastName: z.string().min(1),
    dateOfBirth: x12Date.optional(),
    groupNumber: z.string().optional(),
  }),
  eligibilityInquiry: z.object({ dateOfService: x12Date, serviceTypeCodes: z.array(z.string()).min(1) }),
  coverageOnFile: z.object({
    planName: z.string().optional(),
    effectiveFrom: x12Date,
    effectiveTo: x12Date.optional(),
  }),
  priorAuthorizations: z.array(
    z.object({
      reference: z.string(),
      service: z.string(),
      units: z.number().int(),
      unitMinutes: z.number().int(),
      validFrom: x12Date,
      validTo: x12Date,
    }),
  ),
});

export async function payerEmulator(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);

  app.post(
    '/x12/270',
    {
      schema: { tags: ['emulators'], summary: 'Eligibility inquiry (270) → eligibility response (271)', body: inquiry },
    },
    async (request, reply) => {
      const fault = await applyFault(faults, 'eligibility');
      if (fault) return reply.status(fault.status!).send({ error: 'injected fault' });
      return adjudicate(request.body as Eligibility270);
    },
  );
}
