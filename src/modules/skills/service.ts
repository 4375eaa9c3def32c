import type { RequestContext } from '../../platform/context.js';
import { notFound } from '../../platform/errors.js';
import type { AppDeps } from '../../platform/types.js';
import { availableTools } from './dispatcher.js';

/** Instructions of installed skills (Agent Skills style: loaded on demand). */
export async function skillContent(deps: AppDeps, ctx: RequestContext, slug?: string) {
  const skills = await availableTools(deps, ctx);
  const chosen = slug ? skills.filter((s) => s.slug === slug) : skills;
  if (slug && chosen.length === 0) throw notFound('Installed skill');
  return {
    items: chosen.map((s) => ({ slug: s.slug, version: s.version, content: s.content, tools: s.tools })),
    nextCursor: null,
  };
}

export async function routing(deps: AppDeps, ctx: RequestContext) {
  const skills = await availableTools(deps, ctx);
  return {
    items: skills.map((s) => ({ slug: s.slug, skillId: s.skillId, triggers: s.triggers, tools: s.tools })),
    nextCursor: null,
  };
}
