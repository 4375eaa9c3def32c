import { z } from 'zod';
import { daySchema } from '../../platform/http-schemas.js';

/** Today in the timezone furthest ahead (UTC+14), so a service given today is accepted everywhere. */
const latestToday = () => new Date(Date.now() + 14 * 3_600_000).toISOString().slice(0, 10);

/** A claim bills a service already given: its date is not after today (in any timezone). */
const serviceDate = daySchema.refine((d) => !/^\d{4}-\d{2}-\d{2}$/.test(d) || d <= latestToday(), {
  error: 'The service date cannot be in the future (a claim bills a service already given)',
});

export const createClaimBody = z.object({
  patientId: z.string().min(1).max(100),
  payer: z.string().trim().min(1).max(200),
  amountCents: z.number().int().min(1).max(100_000_000),
  codes: z
    .array(
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9.-]{1,16}$/, 'A billing code such as 97110'),
    )
    .max(50)
    .default([]),
  serviceDate: serviceDate.optional(),
  noteId: z.string().min(1).max(100).optional(),
});
export type CreateClaimInput = z.infer<typeof createClaimBody>;

export const adjudicateBody = z
  .object({
    outcome: z.enum(['paid', 'denied']),
    paidAmountCents: z.number().int().min(0).max(100_000_000).optional(),
    reason: z.string().trim().min(1).max(1000).optional(),
  })
  .refine((b) => b.outcome === 'paid' || b.paidAmountCents === undefined, {
    message: 'paidAmountCents only goes with outcome paid',
    path: ['paidAmountCents'],
  });
export type AdjudicateInput = z.infer<typeof adjudicateBody>;

export const claimSchema = z.object({
  id: z.string(),
  patientId: z.string(),
  noteId: z.string().nullable(),
  payer: z.string(),
  serviceDate: z.string().nullable(),
  codes: z.array(z.string()),
  amountCents: z.number().int(),
  status: z.enum(['submitted', 'paid', 'denied']),
  paidAmountCents: z.number().int().nullable(),
  denialReason: z.string().nullable(),
  submittedBy: z.string(),
  submittedAt: z.string(),
  adjudicatedAt: z.string().nullable(),
});
export type Claim = z.infer<typeof claimSchema>;

export const listClaimsQuery = z.object({
  patientId: z.string().min(1).max(100).optional(),
  status: z.enum(['submitted', 'paid', 'denied']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
});
