// Call a tool locally the way Atrium's dispatcher would: scope check, inputSchema validation,
// then either an in-process handler or a signed HTTPS call to your endpoint.
import { randomUUID } from 'node:crypto';
import { createAjv } from './ajv.js';
import type { ToolHandler } from './handler.js';
import { checkToolInput, type ManifestProblem, type Scope, type SkillManifest, validateManifest } from './manifest.js';
import type { ToolCallRequest } from './protocol.js';
import { signRequest } from './verify.js';

export type HarnessOutcome =
  | { outcome: 'ok'; status: 200; result: unknown }
  | { outcome: 'denied'; status: 403; code: 'scope_denied'; requiredScopes: Scope[]; grantedScopes: Scope[] }
  | { outcome: 'denied'; status: 404; code: 'not_found' }
  | { outcome: 'denied'; status: 422; code: 'invalid_input'; errors: ManifestProblem[] }
  | { outcome: 'error'; status: 502; code: 'upstream_failed'; detail: string };

export interface HarnessOptions {
  manifest: SkillManifest;
  /** The scopes an admin granted at install (default: all declared). */
  grantedScopes?: Scope[];
  /** Run tools in-process... */
  tools?: Record<string, ToolHandler>;
  /** ...or call your endpoint, signed with the secret Atrium gave you. */
  endpoint?: { url: string; secret: string };
  workspaceId?: string;
  userId?: string;
}

export interface SkillHarness {
  invoke(tool: string, input: unknown): Promise<HarnessOutcome>;
}

export function createSkillHarness(opts: HarnessOptions): SkillHarness {
  const check = validateManifest(opts.manifest);
  if (!check.ok) {
    throw new Error(`Invalid manifest: ${check.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
  }
  const manifest = check.manifest;
  const granted = opts.grantedScopes ?? manifest.scopes.map((s) => s.scope);
  const ajv = createAjv();

  return {
    async invoke(name, input) {
      const tool = manifest.tools.find((t) => t.name === name);
      if (!tool) return { outcome: 'denied', status: 404, code: 'not_found' };
      if (!tool.requiredScopes.every((s) => granted.includes(s))) {
        return {
          outcome: 'denied',
          status: 403,
          code: 'scope_denied',
          requiredScopes: tool.requiredScopes,
          grantedScopes: granted,
        };
      }
      const valid = checkToolInput(tool, input, ajv);
      if (!valid.ok) return { outcome: 'denied', status: 422, code: 'invalid_input', errors: valid.errors };
      const call: ToolCallRequest = {
        id: `inv_${randomUUID()}`,
        type: 'skill.tool_call',
        created_at: new Date().toISOString(),
        workspace_id: opts.workspaceId ?? 'ws_local',
        skill: { slug: manifest.slug, skillId: manifest.skillId, version: manifest.version },
        tool: name,
        input: input as Record<string, unknown>,
        caller: { userId: opts.userId ?? 'usr_local' },
        grantedScopes: granted,
      };
      try {
        if (opts.endpoint) return await callEndpoint(opts.endpoint, call);
        const handler = opts.tools?.[name];
        if (!handler) return { outcome: 'denied', status: 404, code: 'not_found' };
        return { outcome: 'ok', status: 200, result: await handler(call.input, call) };
      } catch (err) {
        return { outcome: 'error', status: 502, code: 'upstream_failed', detail: (err as Error).message };
      }
    },
  };
}

async function callEndpoint(endpoint: { url: string; secret: string }, call: ToolCallRequest): Promise<HarnessOutcome> {
  const body = JSON.stringify(call);
  const response = await fetch(endpoint.url, {
    method: 'POST',
    headers: signRequest(endpoint.secret, call.id, body),
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) {
    return { outcome: 'error', status: 502, code: 'upstream_failed', detail: `Endpoint answered ${response.status}` };
  }
  try {
    const parsed = JSON.parse(text) as { result?: unknown };
    return { outcome: 'ok', status: 200, result: parsed.result ?? null };
  } catch {
    return { outcome: 'error', status: 502, code: 'upstream_failed', detail: 'Endpoint answered non-JSON' };
  }
}
