// Patients: the minimum record other modules need, insurance authorizations, and break-glass access.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { idParams, problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import {
  authorizationBody,
  authorizationSchema,
  breakGlassBody,
  breakGlassResponse,
  coverageBody,
  coverageQuery,
  coverageSchema,
  createPatientBody,
  listPatientsQuery,
  patchPatientBody,
  patientSchema,
  readingDay,
} from './schema.js';
import * as service from './service.js';

export async function patientRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['patients'];

  app.post(
    '/patients',
    {
      config: { idempotent: true },
      schema: {
        tags,
        summary: 'Create a patient (emits patient.created)',
        body: createPatientBody,
        response: { 201: patientSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.createPatient(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/patients',
    {
      schema: {
        tags,
        summary: 'Search patients by name, MRN or id; best matches first',
        description:
          '`q` matches parts of names, the MRN, an exact date of birth (`1958-03-14`, or month first as in the ' +
          'US: `03/14/1958`, `3/14/1958`; `1958/03/14` too) or the id. Names are compared without ' +
          'accents and case (`jose muller` finds "José Müller", `strasse` "Straße"), as "given family", ' +
          '"family, given" or "family given". With `q` the best matches come first: the full name, MRN or id ' +
          'exactly; then the given or family name exactly (or the date of birth); then a name word or the MRN ' +
          'starting with `q`; then the rest; newest first within each. Without `q`, newest first. ' +
          '`givenName`, `familyName` and `dateOfBirth` match exactly (names ignoring accents and case), each one ' +
          'sent narrowing the list: the web app asks with all three before registering a patient, to warn of a ' +
          'possible duplicate.',
        querystring: listPatientsQuery,
        response: { 200: listOf(patientSchema), ...problemResponses },
      },
    },
    async (request) => service.listPatients(deps, requireCtx(request), request.query),
  );

  app.get(
    '/patients/:id',
    {
      schema: {
        tags,
        summary: 'One patient',
        description:
          "Opening a patient's record is a PHI access: it writes one `phi_access` audit row (context " +
          '`patients.record`) per reader and patient per hour.',
        params: idParams,
        response: { 200: patientSchema, ...problemResponses },
      },
    },
    async (request) => service.readPatientRecord(deps, requireCtx(request), request.params.id),
  );

  app.patch(
    '/patients/:id',
    {
      schema: {
        tags,
        summary: 'Update a patient (emits patient.updated)',
        params: idParams,
        body: patchPatientBody,
        response: { 200: patientSchema, ...problemResponses },
      },
    },
    async (request) => service.patchPatient(deps, requireCtx(request), request.params.id, request.body),
  );

  app.put(
    '/patients/:id/coverage',
    {
      schema: {
        tags,
        summary: "Set the patient's insurance coverage from today (emits patient.updated)",
        description:
          'The coverage the eligibility skill checks. A coverage that started today is corrected in place; ' +
          'an earlier one ends yesterday and this one starts today, so the history is kept. Today is the ' +
          "caller's own date when `today` is sent (a clinic's evening is already tomorrow in UTC; accepted " +
          "within a day of the server's UTC date, else 400 `validation_failed`), else the UTC date.",
        params: idParams,
        body: coverageBody,
        response: { 200: coverageSchema, ...problemResponses },
      },
    },
    async (request) => service.putCoverage(deps, requireCtx(request), request.params.id, request.body),
  );

  app.get(
    '/patients/:id/coverage',
    {
      schema: {
        tags,
        summary: "The patient's coverage on file today (404 when none)",
        description:
          "The coverage active on `today` (the caller's own date, as for PUT; the UTC date when omitted), " +
          'else the latest.',
        params: idParams,
        querystring: coverageQuery,
        response: { 200: coverageSchema, ...problemResponses },
      },
    },
    async (request) =>
      service.getCoverage(deps, requireCtx(request), request.params.id, readingDay(request.query.today)),
  );

  app.post(
    '/patients/:id/authorizations',
    {
      schema: {
        tags,
        summary: 'Record insurance-authorized units',
        params: idParams,
        body: authorizationBody,
        response: { 201: authorizationSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await service.addAuthorization(deps, requireCtx(request), request.params.id, request.body)),
  );

  app.get(
    '/patients/:id/authorizations',
    {
      schema: {
        tags,
        summary: "A patient's insurance authorizations, earliest first",
        params: idParams,
        response: { 200: listOf(authorizationSchema), ...problemResponses },
      },
    },
    async (request) => ({
      items: await service.listAuthorizations(deps, requireCtx(request), request.params.id),
      nextCursor: null,
    }),
  );

  app.post(
    '/patients/:id/break-glass',
    {
      schema: {
        tags,
        summary: 'Emergency access: audit row, break_glass.invoked event, e-mail to admins',
        params: idParams,
        body: breakGlassBody,
        response: { 201: breakGlassResponse, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await service.breakGlass(deps, requireCtx(request), request.params.id, request.body.reason)),
  );
}
