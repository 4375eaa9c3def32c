// SOAP notes: draft clinical notes per patient, changed and signed once by their author (emits soap_note.signed).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { idParams, problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import { createNoteBody, listNotesQuery, noteSchema, updateNoteBody } from './schema.js';
import * as service from './service.js';

export async function noteRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['notes'];

  app.post(
    '/notes',
    {
      schema: {
        tags,
        summary: 'Create a draft SOAP note for a patient',
        body: createNoteBody,
        response: { 201: noteSchema, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createNote(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/notes',
    {
      schema: {
        tags,
        summary: 'SOAP notes, newest first (optionally of one patient)',
        querystring: listNotesQuery,
        response: { 200: listOf(noteSchema), ...problemResponses },
      },
    },
    async (request) => service.listNotes(deps, requireCtx(request), request.query),
  );

  app.get(
    '/notes/:id',
    {
      schema: { tags, summary: 'One SOAP note', params: idParams, response: { 200: noteSchema, ...problemResponses } },
    },
    async (request) => service.getNote(deps, requireCtx(request), request.params.id),
  );

  app.patch(
    '/notes/:id',
    {
      schema: {
        tags,
        summary: 'Change a draft note (author only; 409 once signed)',
        description:
          "Sends only the sections to change. Only the note's author may change it (403 `forbidden` for anyone " +
          'else); a signed note is final: 409 `conflict`.',
        params: idParams,
        body: updateNoteBody,
        response: { 200: noteSchema, ...problemResponses },
      },
    },
    async (request) => service.updateNote(deps, requireCtx(request), request.params.id, request.body),
  );

  app.post(
    '/notes/:id/sign',
    {
      schema: {
        tags,
        summary: 'Sign the note (author only; final; emits soap_note.signed)',
        params: idParams,
        response: { 200: noteSchema, ...problemResponses },
      },
    },
    async (request) => service.signNote(deps, requireCtx(request), request.params.id),
  );
}
