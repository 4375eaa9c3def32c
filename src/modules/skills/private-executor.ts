// Runs a private skill's tool: a signed HTTPS POST to the customer's endpoint through the
// SSRF policy of platform/upstream (same signing and URL rules as outbound webhooks).
import type { Scope, SkillManifest } from '../../../packages/skill-sdk/src/manifest.js';
import type { ToolCallRequest } from '../../../packages/skill-sdk/src/protocol.js';
import type { RequestContext } from '../../platform/context.js';
import { decryptSecret } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import { toOutboundError } from '../../platform/http/safe-client.js';
import { UnsafeUrlError } from '../../platform/http/url-guard.js';
import { signedHeaders } from '../../platform/signing.js';
import type { AppDeps } from '../../platform/types.js';
import {
  createUpstream,
  UpstreamError,
  type UpstreamResponse,
  upstreamAppError,
} from '../../platform/upstream/index.js';
import { type PrivateSkill, secretAad } from '../marketplace/index.js';

const MAX_SKILL_RESPONSE_BYTES = 64 * 1024;

export async function callPrivateTool(
  deps: AppDeps,
  ctx: RequestContext,
  skill: PrivateSkill,
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
  let response: UpstreamResponse;
  try {
    response = await createUpstream({
      name: 'private_skill',
      customerUrls: { allowCidrs: deps.config.webhooks.allowCidrs },
      timeoutMs: deps.config.webhooks.timeoutMs,
      retries: 0,
      maxResponseBytes: MAX_SKILL_RESPONSE_BYTES,
    }).request({
      method: 'POST',
      url: skill.endpoint,
      headers: signedHeaders(secret, invocationId, body),
      body,
      requestId: ctx.requestId,
      // One breaker per (endpoint origin, workspace): a workspace's broken endpoint cannot make
      // calls of another workspace to the same host fail fast.
      breakerKey: ctx.workspaceId,
    });
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new AppError('upstream_failed', 502, 'The skill endpoint is not an allowed address', {
        ...upstream,
        reason: err.reason,
      });
    }
    if (!(err instanceof UpstreamError)) throw err;
    if (err.kind === 'timeout') {
      throw new AppError('upstream_timeout', 504, 'The skill endpoint did not answer in time', upstream);
    }
    if (err.kind === 'breaker_open') throw upstreamAppError(err, 'The skill endpoint', upstream);
    if (err.kind === 'body_too_large') {
      throw new AppError('upstream_failed', 502, 'The skill endpoint answered with more than 64 KiB', {
        ...upstream,
        reason: err.kind,
      });
    }
    throw new AppError('upstream_failed', 502, 'The skill endpoint could not be reached', {
      ...upstream,
      reason: toOutboundError(err).kind,
    });
  }
  if (response.status < 200 || response.status >= 300) {
    throw new AppError('upstream_failed', 502, `The skill endpoint answered ${response.status}`, {
      ...upstream,
      upstreamStatus: response.status,
    });
  }
  try {
    const parsed = response.json<{ result?: unknown }>();
    return parsed && typeof parsed === 'object' && 'result' in parsed ? parsed.result : parsed;
  } catch {
    throw new AppError('upstream_failed', 502, 'The skill endpoint answered with invalid JSON', upstream);
  }
}
