// Runs a private skill's tool: a signed HTTPS POST to the customer's endpoint through the
// SSRF-safe client (same signing and URL rules as outbound webhooks).
import type { Scope, SkillManifest } from '../../../packages/skill-sdk/src/manifest.js';
import type { ToolCallRequest } from '../../../packages/skill-sdk/src/protocol.js';
import type { RequestContext } from '../../platform/context.js';
import { decryptSecret } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import { OutboundError, safeRequest } from '../../platform/http/safe-client.js';
import { UnsafeUrlError } from '../../platform/http/url-guard.js';
import { signedHeaders } from '../../platform/signing.js';
import type { AppDeps } from '../../platform/types.js';
import type { PrivateSkillRow } from '../marketplace/repository.js';
import { secretAad } from '../marketplace/service.js';

export async function callPrivateTool(
  deps: AppDeps,
  ctx: RequestContext,
  skill: PrivateSkillRow,
  pinned: SkillManifest,
  invocationId: string,
  tool: string,
  input: Record<string, unknown>,
  granted: Scope[],
): Promise<unknown> {
  const secret = decryptSecret(
    [{ id: deps.config.encryptionKeyId, key: deps.config.encryptionKey }],
    skill.secretEncrypted,
    secretAad(ctx.workspaceId, skill.slug),
  );
  const call: ToolCallRequest = {
    id: invocationId,
    type: 'skill.tool_call',
    created_at: new Date().toISOString(),
    workspace_id: ctx.workspaceId,
    skill: { slug: pinned.slug, skillId: pinned.skillId, version: pinned.version },
    tool,
    input,
    caller: { userId: ctx.userId },
    grantedScopes: granted,
  };
  const body = JSON.stringify(call);
  const upstream = { upstream: 'private_skill', slug: skill.slug };
  let response: Awaited<ReturnType<typeof safeRequest>>;
  try {
    response = await safeRequest(skill.endpoint, {
      method: 'POST',
      headers: signedHeaders(secret, invocationId, body),
      body,
      timeoutMs: deps.config.webhooks.timeoutMs,
      allowCidrs: deps.config.webhooks.allowCidrs,
    });
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new AppError('upstream_failed', 502, 'The skill endpoint is not an allowed address', {
        ...upstream,
        reason: err.reason,
      });
    }
    if (err instanceof OutboundError && err.kind === 'timeout') {
      throw new AppError('upstream_timeout', 504, 'The skill endpoint did not answer in time', upstream);
    }
    throw new AppError('upstream_failed', 502, 'The skill endpoint could not be reached', {
      ...upstream,
      reason: err instanceof OutboundError ? err.kind : 'other',
    });
  }
  if (response.status < 200 || response.status >= 300) {
    throw new AppError('upstream_failed', 502, `The skill endpoint answered ${response.status}`, {
      ...upstream,
      upstreamStatus: response.status,
    });
  }
  try {
    const parsed = JSON.parse(response.body) as { result?: unknown };
    return parsed && typeof parsed === 'object' && 'result' in parsed ? parsed.result : parsed;
  } catch {
    throw new AppError('upstream_failed', 502, 'The skill endpoint answered with invalid JSON', upstream);
  }
}
