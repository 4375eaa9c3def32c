// Skill marketplace: catalog, tier-limited installs with opt-in scopes, Enterprise private skills.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { noContent, problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import {
  catalogItemSchema,
  catalogQuery,
  installBody,
  installedList,
  installResponse,
  moduleResponse,
  privateSkillBody,
  privateSkillSchema,
  slugParams,
  uninstallBody,
} from './schema.js';
import * as service from './service.js';

export async function marketplaceRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['marketplace'];

  app.get(
    '/marketplace/catalog',
    {
      schema: {
        tags,
        summary: 'Browse and search the skill catalog (built-in and this workspace’s private skills)',
        querystring: catalogQuery,
        response: { 200: listOf(catalogItemSchema), ...problemResponses },
      },
    },
    async (request) => service.listCatalog(deps, requireCtx(request), request.query),
  );

  app.get(
    '/marketplace/module/:slug',
    {
      schema: {
        tags,
        summary: 'A skill’s full manifest, instructions and install state',
        params: slugParams,
        response: { 200: moduleResponse, ...problemResponses },
      },
    },
    async (request) => service.getModule(deps, requireCtx(request), request.params.slug),
  );

  app.post(
    '/marketplace/install',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Install a skill granting an opt-in subset of its scopes (201), or change its grants (200)',
        description:
          'Free → 403 tier_required; below the skill’s minTier → 403 tier_required; at the tier’s active-install ' +
          'limit (standard 5, advanced 20) → 409 limit_reached; a scope the skill does not declare → 422 scope_not_declared. ' +
          'Re-installing re-pins the install to the catalog’s current version.',
        body: installBody,
        response: { 200: installResponse, 201: installResponse, ...problemResponses },
      },
    },
    async (request, reply) => {
      const { created, install } = await service.install(deps, requireCtx(request), request.body);
      return reply.status(created ? 201 : 200).send({ install });
    },
  );

  app.post(
    '/marketplace/uninstall',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Uninstall a skill: its grants are revoked and its tools disappear at once',
        body: uninstallBody,
        response: { 200: installResponse, ...problemResponses },
      },
    },
    async (request) => service.uninstall(deps, requireCtx(request), request.body.slug),
  );

  app.get(
    '/marketplace/installed',
    {
      schema: {
        tags,
        summary: 'Active installs with their pinned version and granted scopes, and the tier limit',
        response: { 200: installedList, ...problemResponses },
      },
    },
    async (request) => service.listInstalled(deps, requireCtx(request)),
  );

  app.post(
    '/marketplace/skills',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Enterprise: register (201, secret shown once) or update (200) a workspace-private skill',
        description:
          'Tools of a private skill run by a signed HTTPS POST to `endpoint` (contract §7.2 signing, §7.3 URL rules). ' +
          'An update needs a higher semantic version; installs stay pinned until re-installed.',
        body: privateSkillBody,
        response: { 200: privateSkillSchema, 201: privateSkillSchema, ...problemResponses },
      },
    },
    async (request, reply) => {
      const { created, body } = await service.savePrivateSkill(deps, requireCtx(request), request.body);
      return reply.status(created ? 201 : 200).send(body);
    },
  );

  app.get(
    '/marketplace/skills',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'This workspace’s private skills (without secrets)',
        response: { 200: listOf(privateSkillSchema), ...problemResponses },
      },
    },
    async (request) => ({ ...(await service.listPrivateSkills(deps, requireCtx(request))), nextCursor: null }),
  );

  app.delete(
    '/marketplace/skills/:slug',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Delete a private skill (uninstalls it)',
        params: slugParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.deletePrivateSkill(deps, requireCtx(request), request.params.slug);
      return reply.status(204).send(null);
    },
  );
}
