// Tasks and the day view (contract §5.3).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { idParams, noContent, problemResponses } from '../../platform/http-schemas.js';
import { listOf, pageQuery } from '../../platform/pagination.js';
import { createTaskBody, dayQuery, daySchema, listTasksQuery, taskSchema, updateTaskBody } from './schema.js';
import * as tasks from './tasks.js';

export async function taskRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['calendar'];

  app.post(
    '/tasks',
    {
      config: { idempotent: true },
      schema: {
        tags,
        summary: 'Create a task, for an event or not (422 unknown_event / unknown_assignee)',
        body: createTaskBody,
        response: { 201: taskSchema, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await tasks.createTask(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/tasks',
    {
      schema: {
        tags,
        summary: 'Tasks: open first, by due time (none last), then id (`assignee=me` for your own); paged by `cursor`',
        querystring: listTasksQuery.extend(pageQuery.shape),
        response: { 200: listOf(taskSchema), ...problemResponses },
      },
    },
    async (request) =>
      tasks.listTasks(deps, requireCtx(request), {
        eventId: request.query.eventId,
        assignee: request.query.assignee,
        done: request.query.done === undefined ? undefined : request.query.done === 'true',
        limit: request.query.limit,
        cursor: request.query.cursor,
      }),
  );

  app.patch(
    '/tasks/:id',
    {
      schema: {
        tags,
        summary: 'Change a task (tick it done)',
        params: idParams,
        body: updateTaskBody,
        response: { 200: taskSchema, ...problemResponses },
      },
    },
    async (request) => tasks.updateTask(deps, requireCtx(request), request.params.id, request.body),
  );

  app.delete(
    '/tasks/:id',
    { schema: { tags, summary: 'Delete a task', params: idParams, response: { 204: noContent, ...problemResponses } } },
    async (request, reply) => {
      await tasks.deleteTask(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/calendar/day',
    {
      schema: {
        tags,
        summary: "A local day's events, with the tasks of those events and the tasks due that day",
        querystring: dayQuery,
        response: { 200: daySchema, ...problemResponses },
      },
    },
    async (request) => tasks.dayView(deps, requireCtx(request), request.query),
  );
}
