import {
  compareVersions,
  type Scope,
  type SkillManifest,
  validateManifest,
} from '../../../packages/skill-sdk/src/manifest.js';
import { writeAudit } from '../../platform/audit/audit.js';
import { type RequestContext, tierAtLeast } from '../../platform/context.js';
import { encryptSecret } from '../../platform/crypto.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, conflict, notFound, unprocessable } from '../../platform/errors.js';
import { checkOutboundUrl, UnsafeUrlError } from '../../platform/http/url-guard.js';
import { newId } from '../../platform/ids.js';
import { generateSigningSecret } from '../../platform/signing.js';
import { planName, requireFeature, SKILL_INSTALL_LIMIT } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import { builtinListing } from './builtins.js';
import { type CatalogEntry, contentSummary, findCatalogEntry, workspaceCatalog } from './catalog.js';
import * as repo from './repository.js';
import type { InstallView } from './schema.js';

function presentInstall(row: repo.InstallRow, latest: SkillManifest | undefined): InstallView {
  const granted = row.grantedScopes as Scope[];
  const latestVersion = latest?.version ?? row.version;
  return {
    slug: row.slug,
    skillId: row.skillId,
    version: row.version,
    grantedScopes: granted,
    status: row.status,
    installedAt: row.installedAt.toISOString(),
    installedBy: row.installedBy,
    updatedAt: row.updatedAt.toISOString(),
    updateAvailable: compareVersions(latestVersion, row.version) > 0,
    latestVersion,
    newScopes: latest
      ? latest.scopes.map((s) => s.scope).filter((s) => !row.manifest.scopes.some((p) => p.scope === s))
      : [],
  };
}

const matches = (m: SkillManifest, q: string) =>
  [m.name, m.summary, m.description, m.category, m.slug, ...(m.triggers ?? []), ...m.tools.map((t) => t.name)]
    .join(' ')
    .toLowerCase()
    .includes(q.toLowerCase());

export async function listCatalog(deps: AppDeps, ctx: RequestContext, query: { q?: string; category?: string }) {
  return withTenant(deps.db, ctx, async (tx) => {
    const [entries, installs] = await Promise.all([
      workspaceCatalog(tx, ctx.workspaceId),
      repo.listActiveInstalls(tx, ctx.workspaceId),
    ]);
    const pinned = new Map(installs.map((i) => [i.slug, i.version]));
    const items = entries
      .map((e) => e.manifest)
      .filter((m) => !query.q || matches(m, query.q))
      .filter((m) => !query.category || m.category.toLowerCase() === query.category.toLowerCase())
      .map((m) => ({ ...m, installed: pinned.has(m.slug), installedVersion: pinned.get(m.slug) ?? null }));
    return { items, nextCursor: null };
  });
}

export async function getModule(deps: AppDeps, ctx: RequestContext, slug: string) {
  return withTenant(deps.db, ctx, async (tx) => {
    const entry = await findCatalogEntry(tx, ctx.workspaceId, slug);
    if (!entry) throw notFound('Skill');
    const row = await repo.findInstall(tx, ctx.workspaceId, slug);
    const active = row?.status === 'active' ? row : undefined;
    return {
      ...entry.manifest,
      installed: !!active,
      installedVersion: active?.version ?? null,
      content: entry.content,
      contentSummary: contentSummary(entry.content),
      install: active ? presentInstall(active, entry.manifest) : null,
      source: entry.source,
    };
  });
}

export async function listInstalled(deps: AppDeps, ctx: RequestContext) {
  return withTenant(deps.db, ctx, async (tx) => {
    const installs = await repo.listActiveInstalls(tx, ctx.workspaceId);
    const items: InstallView[] = [];
    for (const row of installs) {
      items.push(presentInstall(row, (await findCatalogEntry(tx, ctx.workspaceId, row.slug))?.manifest));
    }
    return {
      items,
      nextCursor: null,
      activeCount: items.length,
      limit: SKILL_INSTALL_LIMIT[ctx.tier],
      tier: ctx.tier,
    };
  });
}

function requireSkillTier(ctx: RequestContext, manifest: SkillManifest): void {
  if (!tierAtLeast(ctx.tier, manifest.minTier)) {
    throw new AppError('tier_required', 403, `${manifest.name} needs the ${planName(manifest.minTier)} plan or above`, {
      feature: `skill:${manifest.slug}`,
      requiredTier: manifest.minTier,
    });
  }
}

/**
 * Installs a skill, or changes the grants of an installed one (re-pinning it to the catalog's
 * current version). Serialised per workspace so concurrent installs cannot pass the tier limit.
 */
export async function install(
  deps: AppDeps,
  ctx: RequestContext,
  input: { slug: string; scopes: string[] },
): Promise<{ created: boolean; install: InstallView }> {
  requireFeature(ctx, 'marketplace_install');
  return withTenant(deps.db, ctx, async (tx) => {
    await repo.lockWorkspaceInstalls(tx, ctx.workspaceId);
    const entry = await findCatalogEntry(tx, ctx.workspaceId, input.slug);
    if (!entry) throw notFound('Skill');
    const { manifest } = entry;
    requireSkillTier(ctx, manifest);
    const declared = new Set<string>(manifest.scopes.map((s) => s.scope));
    const undeclared = input.scopes.filter((s) => !declared.has(s));
    if (undeclared.length) {
      throw unprocessable('scope_not_declared', `${manifest.name} does not declare ${undeclared.join(', ')}`, {
        undeclared,
        declaredScopes: [...declared],
        errors: undeclared.map((s) => ({ path: 'body.scopes', message: `Scope ${s} is not declared by the skill` })),
      });
    }
    const granted = [...new Set(input.scopes)].sort() as Scope[];
    const existing = await repo.findInstall(tx, ctx.workspaceId, input.slug);

    if (existing?.status === 'active') {
      const previousScopes = existing.grantedScopes;
      const saved = await repo.updateInstall(tx, ctx.workspaceId, input.slug, {
        version: manifest.version,
        manifest,
        grantedScopes: granted,
      });
      await writeAudit(tx, ctx, 'admin_action', {
        action: 'marketplace.grants_changed',
        target: input.slug,
        skillId: manifest.skillId,
        version: manifest.version,
        previousVersion: existing.version,
        grantedScopes: granted,
        previousScopes,
      });
      return { created: false, install: presentInstall(saved, manifest) };
    }

    const limit = SKILL_INSTALL_LIMIT[ctx.tier];
    const current = await repo.countActiveInstalls(tx, ctx.workspaceId);
    if (limit !== null && current >= limit) {
      throw new AppError('limit_reached', 409, `The ${ctx.tier} tier allows ${limit} active skills`, {
        limit,
        current,
      });
    }
    const saved = await repo.upsertInstall(tx, {
      workspaceId: ctx.workspaceId,
      slug: input.slug,
      skillId: manifest.skillId,
      version: manifest.version,
      manifest,
      grantedScopes: granted,
      status: 'active',
      installedAt: new Date(),
      installedBy: ctx.userId,
    });
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'marketplace.install',
      target: input.slug,
      skillId: manifest.skillId,
      version: manifest.version,
      grantedScopes: granted,
    });
    return { created: true, install: presentInstall(saved, manifest) };
  });
}

/** Revokes every grant at once: the dispatcher reads the install row on every call. */
export async function uninstall(deps: AppDeps, ctx: RequestContext, slug: string) {
  return withTenant(deps.db, ctx, async (tx) => {
    await repo.lockWorkspaceInstalls(tx, ctx.workspaceId);
    const existing = await repo.findInstall(tx, ctx.workspaceId, slug);
    if (existing?.status !== 'active') throw notFound('Installed skill');
    const saved = await repo.updateInstall(tx, ctx.workspaceId, slug, {
      status: 'uninstalled',
      grantedScopes: [],
      uninstalledAt: new Date(),
      uninstalledBy: ctx.userId,
    });
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'marketplace.uninstall',
      target: slug,
      skillId: existing.skillId,
      version: existing.version,
      revokedScopes: existing.grantedScopes,
    });
    const latest = (await findCatalogEntry(tx, ctx.workspaceId, slug))?.manifest;
    return { install: presentInstall(saved, latest) };
  });
}

// ---- Enterprise private skills -------------------------------------------------------------

const secretAad = (workspaceId: string, slug: string) => `private_skill:${workspaceId}:${slug}`;

function presentPrivate(row: repo.PrivateSkillRow, secret?: string) {
  return {
    skill: row.manifest,
    endpoint: row.endpoint,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(secret ? { secret } : {}),
  };
}

async function checkEndpoint(deps: AppDeps, endpoint: string): Promise<void> {
  try {
    await checkOutboundUrl(endpoint, { allowCidrs: deps.config.webhooks.allowCidrs });
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw unprocessable('unsafe_url', err.message, {
        reason: err.reason,
        errors: [{ path: 'body.endpoint', message: err.message }],
      });
    }
    throw err;
  }
}

/**
 * Registers a workspace-private skill (201 with the signing secret, shown once), or updates it
 * when the slug exists and the version is higher (200, same secret). Existing installs stay
 * pinned to the version they granted until an admin re-installs.
 */
export async function savePrivateSkill(
  deps: AppDeps,
  ctx: RequestContext,
  input: { manifest: Record<string, unknown>; endpoint: string; content?: string },
) {
  requireFeature(ctx, 'custom_skills');
  // Private skills are an Enterprise feature whatever the manifest says (contract §12).
  const check = validateManifest({
    skillId: 'assigned-by-atrium',
    ...input.manifest,
    visibility: 'private',
    minTier: 'enterprise',
  });
  if (!check.ok) {
    throw unprocessable('invalid_manifest', 'The manifest is invalid', {
      errors: check.errors.map((e) => ({ path: `body.manifest.${e.path}`, message: e.message })),
    });
  }
  const proposed = check.manifest;
  if (builtinListing(proposed.slug)) throw conflict(`The slug ${proposed.slug} belongs to a built-in skill`);
  // DNS and address checks happen before the transaction (no network inside it).
  await checkEndpoint(deps, input.endpoint);

  return withTenant(deps.db, ctx, async (tx) => {
    const existing = await repo.findPrivateSkill(tx, ctx.workspaceId, proposed.slug);
    const content = input.content ?? `# ${proposed.name}\n\n${proposed.description}\n`;
    if (existing) {
      if (compareVersions(proposed.version, existing.version) <= 0) {
        throw conflict(`Version ${proposed.version} is not newer than ${existing.version}`, {
          currentVersion: existing.version,
        });
      }
      const manifest: SkillManifest = { ...proposed, skillId: existing.skillId, visibility: 'private' };
      const saved = await repo.updatePrivateSkill(tx, ctx.workspaceId, proposed.slug, {
        version: manifest.version,
        manifest,
        content,
        endpoint: input.endpoint,
      });
      await writeAudit(tx, ctx, 'admin_action', {
        action: 'marketplace.private_skill.update',
        target: manifest.slug,
        skillId: manifest.skillId,
        version: manifest.version,
        previousVersion: existing.version,
      });
      return { created: false, body: presentPrivate(saved) };
    }
    const manifest: SkillManifest = { ...proposed, skillId: newId('skl'), visibility: 'private' };
    const secret = generateSigningSecret();
    const saved = await repo.insertPrivateSkill(tx, {
      workspaceId: ctx.workspaceId,
      slug: manifest.slug,
      skillId: manifest.skillId,
      version: manifest.version,
      manifest,
      content,
      endpoint: input.endpoint,
      secretEncrypted: encryptSecret(
        { id: deps.config.encryptionKeyId, key: deps.config.encryptionKey },
        secret,
        secretAad(ctx.workspaceId, manifest.slug),
      ),
      createdBy: ctx.userId,
    });
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'marketplace.private_skill.create',
      target: manifest.slug,
      skillId: manifest.skillId,
      version: manifest.version,
    });
    return { created: true, body: presentPrivate(saved, secret) };
  });
}

export async function listPrivateSkills(deps: AppDeps, ctx: RequestContext) {
  return withTenant(deps.db, ctx, async (tx) => ({
    items: (await repo.listPrivateSkills(tx, ctx.workspaceId)).map((r) => presentPrivate(r)),
  }));
}

export async function deletePrivateSkill(deps: AppDeps, ctx: RequestContext, slug: string): Promise<void> {
  await withTenant(deps.db, ctx, async (tx) => {
    await repo.lockWorkspaceInstalls(tx, ctx.workspaceId);
    const existing = await repo.findPrivateSkill(tx, ctx.workspaceId, slug);
    if (!existing) throw notFound('Private skill');
    const installRow = await repo.findInstall(tx, ctx.workspaceId, slug);
    if (installRow?.status === 'active') {
      await repo.updateInstall(tx, ctx.workspaceId, slug, {
        status: 'uninstalled',
        grantedScopes: [],
        uninstalledAt: new Date(),
        uninstalledBy: ctx.userId,
      });
    }
    await repo.deletePrivateSkill(tx, ctx.workspaceId, slug);
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'marketplace.private_skill.delete',
      target: slug,
      skillId: existing.skillId,
    });
  });
}

export type { CatalogEntry };
export { secretAad };
