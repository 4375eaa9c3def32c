// The only path to a tool (from POST /skills/invoke and from the chat): checks the install, the
// tool's required scopes against the grants and the input against inputSchema, then runs the tool
// with a capability object holding only the granted scopes' clients. One skill_invocation audit
// row per call, whatever the outcome.
import { performance } from 'node:perf_hooks';
import type { ValidateFunction } from 'ajv';
import {
  type Scope,
  type SkillManifest,
  type ToolDefinition,
  toProblem,
} from '../../../packages/skill-sdk/src/manifest.js';
import { writeAudit } from '../../platform/audit/audit.js';
import { type RequestContext, tierAtLeast } from '../../platform/context.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { hasFeature } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import {
  type CatalogEntry,
  findCatalogEntry,
  findInstall,
  listActiveInstalls,
  workspaceCatalog,
} from '../marketplace/index.js';
import { buildCapabilities } from './capabilities.js';
import { builtinSkill } from './catalog/index.js';
import { callPrivateTool } from './private-executor.js';
import { toolValidators } from './validators.js';

export type Outcome = 'ok' | 'denied' | 'error';
/** Who asked: the API, the assistant's chat, or a module acting on arrived data (e.g. `mail`). */
export type InvokeVia = 'api' | 'chat' | 'mail';

export interface InvokeRequest {
  slug: string;
  tool: string;
  input: unknown;
}

const outcomes = new WeakMap<AppError, Outcome>();

/** The audited outcome of a failed invocation (refusals are `denied`, failures `error`). */
export function outcomeOf(err: AppError): Outcome {
  return outcomes.get(err) ?? 'error';
}

interface Resolved {
  entry: CatalogEntry;
  pinned: SkillManifest;
  tool: ToolDefinition;
  granted: Scope[];
  requiredScopes: Scope[];
}

/** Reads the install and the catalog entry; returns the refusal instead of throwing it so it can be audited. */
async function resolve(
  deps: AppDeps,
  ctx: RequestContext,
  req: InvokeRequest,
): Promise<Resolved | { refusal: AppError; skillId: string | null }> {
  return withTenant(deps.db, ctx, async (tx) => {
    const install = await findInstall(tx, ctx.workspaceId, req.slug);
    const entry = install?.status === 'active' ? await findCatalogEntry(tx, ctx.workspaceId, req.slug) : undefined;
    if (install?.status !== 'active' || !entry) return { refusal: notFound('Installed skill'), skillId: null };
    const pinned = install.manifest;
    const tool = pinned.tools.find((t) => t.name === req.tool);
    // A tool exists only if the admin consented to it (pinned) and the skill still has it.
    const current = entry.manifest.tools.find((t) => t.name === req.tool);
    const builtin = entry.source === 'builtin' ? builtinSkill(req.slug) : undefined;
    if (!tool || !current || (entry.source === 'builtin' && !builtin?.tools[req.tool])) {
      return { refusal: notFound('Tool'), skillId: install.skillId };
    }
    if (!hasFeature(ctx.tier, 'marketplace_install') || !tierAtLeast(ctx.tier, entry.manifest.minTier)) {
      return {
        refusal: new AppError('tier_required', 403, 'The workspace tier no longer includes this skill', {
          feature: `skill:${req.slug}`,
          requiredTier: tierAtLeast(entry.manifest.minTier, 'standard') ? entry.manifest.minTier : 'standard',
        }),
        skillId: install.skillId,
      };
    }
    const granted = install.grantedScopes as Scope[];
    const requiredScopes = [...new Set([...tool.requiredScopes, ...current.requiredScopes])];
    if (!requiredScopes.every((s) => granted.includes(s))) {
      return {
        refusal: new AppError('scope_denied', 403, `${req.tool} needs scopes this install has not granted`, {
          requiredScopes,
          grantedScopes: granted,
          missingScopes: requiredScopes.filter((s) => !granted.includes(s)),
        }),
        skillId: install.skillId,
      };
    }
    // Both the pinned version's schema and the current one's; compiled once per skill version.
    const checked = new Set<ValidateFunction>();
    for (const [version, schema] of [
      [pinned, tool.inputSchema],
      [entry.manifest, current.inputSchema],
    ] as const) {
      let validate: ValidateFunction;
      try {
        validate = toolValidators.get({ skillId: version.skillId, version: version.version, tool: req.tool }, schema);
      } catch (err) {
        if (err instanceof AppError) return { refusal: err, skillId: install.skillId };
        throw err;
      }
      if (checked.has(validate)) continue;
      checked.add(validate);
      if (!validate(req.input)) {
        return {
          refusal: new AppError('invalid_input', 422, `The input does not match ${req.tool}'s inputSchema`, {
            errors: (validate.errors ?? []).map(toProblem),
          }),
          skillId: install.skillId,
        };
      }
    }
    return { entry, pinned, tool, granted, requiredScopes };
  });
}

async function audit(
  deps: AppDeps,
  ctx: RequestContext,
  data: {
    skillId: string | null;
    slug: string;
    toolName: string;
    outcome: Outcome;
    via: InvokeVia;
    [k: string]: unknown;
  },
): Promise<string> {
  return withTenant(deps.db, ctx, (tx) => writeAudit(tx, ctx, 'skill_invocation', { ...data, caller: ctx.userId }));
}

/** The assistant's built-in tools (the patient lookup) are audited like any skill tool. */
export async function auditBuiltinTool(
  deps: AppDeps,
  ctx: RequestContext,
  toolName: string,
  outcome: Outcome,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await audit(deps, ctx, { skillId: null, slug: 'assistant', toolName, outcome, via: 'chat', ...extra });
}

/** A model asked for a function it was never offered: refused without touching any skill, and audited. */
export async function auditUnknownTool(deps: AppDeps, ctx: RequestContext, toolName: string): Promise<void> {
  await audit(deps, ctx, { skillId: null, slug: '', toolName: toolName.slice(0, 64), outcome: 'denied', via: 'chat' });
}

export interface InvokeOutcome {
  invocationId: string;
  result: unknown;
}

/** Runs one tool; throws AppError (problem+json) for every refusal and failure, after auditing it. */
export async function invokeTool(
  deps: AppDeps,
  ctx: RequestContext,
  req: InvokeRequest,
  via: InvokeVia,
): Promise<InvokeOutcome> {
  const started = performance.now();
  const invocationId = newId('inv');
  const base = { slug: req.slug, toolName: req.tool, via, invocationId };
  const resolved = await resolve(deps, ctx, req);
  if ('refusal' in resolved) {
    await audit(deps, ctx, { ...base, skillId: resolved.skillId, outcome: 'denied', reason: resolved.refusal.code });
    outcomes.set(resolved.refusal, 'denied');
    throw resolved.refusal;
  }
  const { entry, pinned, granted } = resolved;
  const skill = { slug: pinned.slug, skillId: pinned.skillId, version: pinned.version };
  const input = req.input as Record<string, unknown>;
  let result: unknown;
  try {
    const builtin = entry.source === 'builtin' ? builtinSkill(req.slug) : undefined;
    if (builtin) {
      const caps = buildCapabilities(deps, ctx, skill, granted);
      result = await builtin.tools[req.tool](input, caps);
    } else {
      result = await callPrivateTool(deps, ctx, entry.privateSkill!, pinned, invocationId, req.tool, input, granted);
    }
  } catch (err) {
    const durationMs = Math.round(performance.now() - started);
    const appError =
      err instanceof AppError ? err : new AppError('tool_failed', 500, `The ${req.tool} tool failed unexpectedly`);
    if (!(err instanceof AppError)) ctx.log.error({ err, slug: req.slug, tool: req.tool }, 'skill tool crashed');
    const outcome: Outcome = appError.code === 'scope_denied' ? 'denied' : 'error';
    await audit(deps, ctx, { ...base, skillId: skill.skillId, outcome, errorCode: appError.code, durationMs });
    outcomes.set(appError, outcome);
    throw appError;
  }
  const durationMs = Math.round(performance.now() - started);
  await audit(deps, ctx, { ...base, skillId: skill.skillId, outcome: 'ok', durationMs, version: skill.version });
  return { invocationId, result: result ?? null };
}

/** The tools the caller may use now: installed skills, pinned tools whose required scopes are all granted. */
export async function availableTools(deps: AppDeps, ctx: RequestContext) {
  return withTenant(deps.db, ctx, async (tx) => {
    const installs = await listActiveInstalls(tx, ctx.workspaceId);
    const out: {
      slug: string;
      /** The catalogue's name of the skill, as the Marketplace shows it. */
      name: string;
      skillId: string;
      version: string;
      triggers: string[];
      content: string;
      tools: ToolDefinition[];
      grantedScopes: Scope[];
      /** Scopes its tools need that were not granted (its tools left out for want of them), in manifest order. */
      missingScopes: Scope[];
    }[] = [];
    for (const install of installs) {
      const entry = await findCatalogEntry(tx, ctx.workspaceId, install.slug);
      if (!entry || !tierAtLeast(ctx.tier, entry.manifest.minTier) || !hasFeature(ctx.tier, 'marketplace_install'))
        continue;
      const granted = install.grantedScopes as Scope[];
      const tools = install.manifest.tools.filter((t) => {
        const current = entry.manifest.tools.find((c) => c.name === t.name);
        if (!current) return false;
        const required = [...t.requiredScopes, ...current.requiredScopes];
        return required.every((s) => granted.includes(s));
      });
      const missing = new Set<Scope>();
      for (const t of install.manifest.tools) {
        const current = entry.manifest.tools.find((c) => c.name === t.name);
        if (!current || tools.includes(t)) continue;
        for (const s of [...t.requiredScopes, ...current.requiredScopes]) if (!granted.includes(s)) missing.add(s);
      }
      out.push({
        slug: install.slug,
        name: entry.manifest.name,
        skillId: install.skillId,
        version: install.version,
        triggers: install.manifest.triggers ?? [],
        content: entry.content,
        tools,
        grantedScopes: granted,
        missingScopes: [...missing],
      });
    }
    return out;
  });
}

/**
 * Marketplace skills this workspace's tier allows but that are not installed here (name and
 * triggers): the assistant says so, instead of guessing, when asked for what one of them does.
 */
export async function uninstalledSkills(deps: AppDeps, ctx: RequestContext) {
  return withTenant(deps.db, ctx, async (tx) => {
    const installed = new Set((await listActiveInstalls(tx, ctx.workspaceId)).map((i) => i.slug));
    return (await workspaceCatalog(tx, ctx.workspaceId))
      .filter((e) => !installed.has(e.manifest.slug) && tierAtLeast(ctx.tier, e.manifest.minTier))
      .map((e) => ({ name: e.manifest.name, triggers: e.manifest.triggers ?? [] }))
      .filter((e) => e.triggers.length > 0);
  });
}

/**
 * Runs a tool only if the workspace has it now (installed, active, its scopes granted); otherwise
 * `undefined`, with no audit row: a module offering an optional skill (mail's spam label) asks
 * this instead of recording a refusal for every workspace that never installed the skill.
 */
export async function invokeIfInstalled(
  deps: AppDeps,
  ctx: RequestContext,
  req: InvokeRequest,
  via: InvokeVia,
): Promise<InvokeOutcome | undefined> {
  const available = await availableTools(deps, ctx);
  const has = available.some((s) => s.slug === req.slug && s.tools.some((t) => t.name === req.tool));
  return has ? invokeTool(deps, ctx, req, via) : undefined;
}
