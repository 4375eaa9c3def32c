import { z } from 'zod';
import { daySchema } from '../../platform/http-schemas.js';

const isoDate = daySchema;

/** Today in the timezone furthest ahead (UTC+14), so a birth today is accepted everywhere. */
const latestToday = () => new Date(Date.now() + 14 * 3_600_000).toISOString().slice(0, 10);

/** A birth date: a real calendar date, from 1900 up to today (contract §3a). */
const birthDate = z
  .string({ error: 'Enter the date of birth as YYYY-MM-DD' })
  .pipe(z.iso.date({ error: 'Enter a real date as YYYY-MM-DD (for example 1980-04-23)' }))
  .refine((d) => d >= '1900-01-01', { error: 'The date of birth cannot be before 1900' })
  .refine((d) => d <= latestToday(), { error: 'The date of birth cannot be in the future' });
const name = z.string().trim().min(1).max(200);

export const patientSchema = z.object({
  id: z.string(),
  givenName: z.string(),
  familyName: z.string(),
  dateOfBirth: z.string().nullable(),
  mrn: z.string().nullable(),
  preferredProviderId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Patient = z.infer<typeof patientSchema>;

export const createPatientBody = z.object({
  givenName: name,
  familyName: name,
  dateOfBirth: birthDate.optional(),
  mrn: z.string().trim().min(1).max(64).optional(),
  preferredProviderId: z.string().min(1).max(100).optional(),
});
export type CreatePatientInput = z.infer<typeof createPatientBody>;

export const patchPatientBody = z
  .object({
    givenName: name.optional(),
    familyName: name.optional(),
    dateOfBirth: birthDate.nullable().optional(),
    mrn: z.string().trim().min(1).max(64).nullable().optional(),
    preferredProviderId: z.string().min(1).max(100).nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Send at least one field' });
export type PatchPatientInput = z.infer<typeof patchPatientBody>;

export const listPatientsQuery = z.object({
  q: z.string().trim().max(200).optional(),
  // The duplicate check before registering: exact matches only (names ignoring accents and case), all that are sent.
  givenName: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('Exactly this given name, ignoring accents and case'),
  familyName: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('Exactly this family name, ignoring accents and case'),
  dateOfBirth: isoDate.optional().describe('Exactly this date of birth (YYYY-MM-DD)'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
});

export const authorizationBody = z.object({
  service: z.string().trim().min(1).max(100),
  units: z.number().int().min(1).max(10_000),
  unitMinutes: z.number().int().min(1).max(1440),
  validFrom: isoDate,
  validTo: isoDate,
});
export type AuthorizationInput = z.infer<typeof authorizationBody>;

export const authorizationSchema = z.object({
  id: z.string(),
  patientId: z.string(),
  service: z.string(),
  units: z.number().int(),
  unitMinutes: z.number().int(),
  validFrom: z.string(),
  validTo: z.string(),
  unitsUsed: z.number().int().describe('Units of the sessions booked from it on the calendar (not cancelled)'),
  createdAt: z.string(),
});

export const breakGlassBody = z.object({ reason: z.string().trim().min(10).max(1000) });
export const breakGlassResponse = z.object({
  id: z.string(),
  patientId: z.string(),
  reason: z.string(),
  invokedBy: z.string(),
  invokedAt: z.string(),
  patient: patientSchema,
});

const coverageText = (max: number) => z.string().trim().min(1).max(max);

/** The UTC date `offsetDays` from now (YYYY-MM-DD). */
export const utcDay = (offsetDays = 0) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/**
 * The caller's own date today: a clinic's evening is already tomorrow in UTC (7:37 PM in New York on
 * Nov 26 is Nov 27 UTC), so the web app says which day it is there. Every zone (UTC−12 to UTC+14) is
 * within a day of the UTC date, so nothing further is accepted.
 */
const withinADayOfUtc = (day: string) => day >= utcDay(-1) && day <= utcDay(1);
const callerToday = daySchema
  .refine(withinADayOfUtc, {
    error: "Send the caller's own date today (YYYY-MM-DD), within a day of the server's UTC date",
  })
  .describe(
    "The caller's own date today (YYYY-MM-DD, in their timezone), within a day of the server's UTC date; " +
      'the UTC date when omitted',
  );

/** PUT /patients/:id/coverage: the insurance on file from today (contract §3a), the caller's today when sent. */
export const coverageBody = z.object({
  payerName: coverageText(200),
  payerId: coverageText(80),
  memberId: coverageText(80),
  groupNumber: coverageText(80).optional(),
  planName: coverageText(200).optional(),
  today: callerToday.optional(),
});
export type CoverageInput = z.infer<typeof coverageBody>;

/**
 * GET /patients/:id/coverage: the coverage on file on the caller's today. A read never fails on a browser whose clock
 * is off: a `today` more than a day from the server's UTC date is read as the UTC date (`readingDay`).
 */
export const coverageQuery = z.object({
  today: daySchema
    .optional()
    .describe(
      "The caller's own date today (YYYY-MM-DD); the server's UTC date when omitted or more than a day away from it",
    ),
});
export const readingDay = (today: string | undefined) =>
  today !== undefined && withinADayOfUtc(today) ? today : undefined;

export const coverageSchema = z.object({
  id: z.string(),
  patientId: z.string(),
  payerName: z.string(),
  payerId: z.string(),
  memberId: z.string(),
  groupNumber: z.string().nullable(),
  planName: z.string().nullable(),
  effectiveFrom: z.string().describe('YYYY-MM-DD'),
  effectiveTo: z.string().nullable().describe('YYYY-MM-DD, or null while open-ended'),
});
export type Coverage = z.infer<typeof coverageSchema>;
