// ModelProvider: an OpenAI-compatible chat-completions endpoint with function tools. The chain
// is the configured provider (ATRIUM_AI_BASE_URL) first, then, with emulators on, the offline model
// emulator and its separate fallback endpoint (so a failing primary always has somewhere to go).
import { AppError } from '../../../platform/errors.js';
import type { AppDeps } from '../../../platform/types.js';
import { createUpstream, UpstreamError, type UpstreamResponse } from '../../../platform/upstream/index.js';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface CompletionRequest {
  messages: ChatMessage[];
  tools: FunctionTool[];
}

export interface ModelProvider {
  name: string;
  model: string;
  /** The deterministic offline model (labelled as such in the UI). */
  offline: boolean;
  /** Where it answers (the health probes call it directly, past the circuit breaker). */
  endpoint: { baseUrl: string; apiKey?: string };
  complete(request: CompletionRequest, options?: { requestId?: string }): Promise<ChatMessage>;
}

export class ModelProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface OpenAiCompatibleOptions {
  name: string;
  baseUrl: string;
  apiKey?: string;
  model: string;
  offline?: boolean;
  timeoutMs: number;
}

/** Chat answers are small; a provider streaming megabytes at us is a fault. */
const MAX_COMPLETION_BYTES = 4 * 1024 * 1024;

export function openAiCompatibleProvider(opts: OpenAiCompatibleOptions): ModelProvider {
  // A completion is a paid, non-idempotent POST: no retries. The breaker (per provider and
  // origin) makes a failing provider fail fast, so the chain moves on to the next at once.
  const upstream = createUpstream({
    name: `ai:${opts.name}`,
    baseUrl: opts.baseUrl,
    timeoutMs: opts.timeoutMs,
    retries: 0,
    maxResponseBytes: MAX_COMPLETION_BYTES,
    headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
  });
  return {
    name: opts.name,
    model: opts.model,
    offline: opts.offline ?? false,
    endpoint: { baseUrl: opts.baseUrl, apiKey: opts.apiKey },
    async complete(request, options) {
      let response: UpstreamResponse;
      try {
        response = await upstream.request({
          method: 'POST',
          path: '/chat/completions',
          requestId: options?.requestId,
          json: {
            model: opts.model,
            messages: request.messages,
            ...(request.tools.length ? { tools: request.tools, tool_choice: 'auto' } : {}),
            temperature: 0,
          },
        });
      } catch (err) {
        if (err instanceof UpstreamError && err.kind === 'breaker_open') {
          throw new ModelProviderError(opts.name, 'circuit open after repeated failures: skipped');
        }
        throw new ModelProviderError(opts.name, `unreachable: ${err instanceof UpstreamError ? err.kind : 'error'}`);
      }
      if (!response.ok) throw new ModelProviderError(opts.name, `answered ${response.status}`, response.status);
      let body: { choices?: { message?: ChatMessage }[] } | null = null;
      try {
        body = response.json();
      } catch {
        body = null;
      }
      const message = body?.choices?.[0]?.message;
      if (!message) throw new ModelProviderError(opts.name, 'answered without a message');
      return { role: 'assistant', content: message.content ?? null, tool_calls: message.tool_calls };
    },
  };
}

export const OFFLINE_MODEL = 'atrium-offline-1';
export const OFFLINE_FALLBACK_MODEL = 'atrium-offline-fallback-1';

/** The fallback chain for this deployment, in order. */
export function resolveModelProviders(deps: AppDeps): ModelProvider[] {
  const { ai, emulators } = deps.config;
  const chain: ModelProvider[] = [];
  if (ai.baseUrl) {
    chain.push(
      openAiCompatibleProvider({
        name: 'configured',
        baseUrl: ai.baseUrl,
        apiKey: ai.apiKey,
        model: ai.model,
        timeoutMs: ai.timeoutMs,
      }),
    );
  }
  if (ai.fallback) {
    chain.push(
      openAiCompatibleProvider({
        name: 'configured-fallback',
        baseUrl: ai.fallback.baseUrl,
        apiKey: ai.fallback.apiKey,
        model: ai.fallback.model,
        timeoutMs: ai.timeoutMs,
      }),
    );
  }
  if (emulators) {
    chain.push(
      openAiCompatibleProvider({
        name: 'emulator',
        baseUrl: `${deps.selfUrl()}/_emulators/ai/v1`,
        model: OFFLINE_MODEL,
        offline: true,
        timeoutMs: ai.timeoutMs,
      }),
      // Its own endpoint, fault operation and breaker: what fails the primary does not fail it.
      openAiCompatibleProvider({
        name: 'emulator-fallback',
        baseUrl: `${deps.selfUrl()}/_emulators/ai/fallback/v1`,
        model: OFFLINE_FALLBACK_MODEL,
        offline: true,
        timeoutMs: ai.timeoutMs,
      }),
    );
  }
  return chain;
}

/** Tries each provider in turn; the first answer wins. */
export async function completeWithFallback(
  chain: ModelProvider[],
  request: CompletionRequest,
  options?: { requestId?: string },
): Promise<{ message: ChatMessage; provider: ModelProvider; failures: { provider: string; error: string }[] }> {
  if (chain.length === 0) throw new AppError('unavailable', 503, 'No model provider is configured');
  const failures: { provider: string; error: string }[] = [];
  for (const provider of chain) {
    try {
      return { message: await provider.complete(request, options), provider, failures };
    } catch (err) {
      failures.push({ provider: provider.name, error: (err as Error).message });
    }
  }
  throw new AppError('upstream_failed', 502, 'Every model provider failed', { failures });
}
