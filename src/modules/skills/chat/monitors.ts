// Health probes of the assistant's model providers (contract §9): the primary answers a one-line
// completion in time (called directly, past the circuit breaker, so a recovery shows at the next
// run); its 5xx share over the last minutes of real traffic; and the next provider of the fallback
// chain answers, called directly too, so a tripped primary has somewhere to go (with emulators on, the
// AI emulator's separate fallback endpoint: a fault on the primary does not touch it).
import { performance } from 'node:perf_hooks';
import type { DependencyProbe, ProbeResult } from '../../../platform/module.js';
import type { AppDeps } from '../../../platform/types.js';
import { probeFetch, upstreamErrorRate } from '../../../platform/upstream/index.js';
import { listActiveInstalls } from '../../marketplace/index.js';
import { type ModelProvider, resolveModelProviders } from './model-provider.js';

const SLOW_MS = 3_000;

async function ping(provider: ModelProvider, signal: AbortSignal): Promise<ProbeResult> {
  const started = performance.now();
  const res = await probeFetch(`ai-${provider.name}`, `${provider.endpoint.baseUrl}/chat/completions`, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      ...(provider.endpoint.apiKey ? { authorization: `Bearer ${provider.endpoint.apiKey}` } : {}),
    },
    body: JSON.stringify({
      model: provider.model,
      messages: [{ role: 'user', content: 'ping' }],
      max_tokens: 1,
      temperature: 0,
    }),
  });
  const ms = Math.round(performance.now() - started);
  const body = (await res.json().catch(() => undefined)) as { choices?: { message?: unknown }[] } | undefined;
  if (!res.ok)
    return {
      status: 'fail',
      observedValue: res.status,
      observedUnit: 'http status',
      output: `${provider.name} answered ${res.status}`,
    };
  // What the chat needs from it (model-provider.ts): a message to answer with.
  if (!body?.choices?.[0]?.message)
    return {
      status: 'fail',
      observedValue: res.status,
      observedUnit: 'http status',
      output: `${provider.name} answered ${res.status} without a completion message`,
    };
  return {
    status: ms <= SLOW_MS ? 'pass' : 'warn',
    observedValue: ms,
    observedUnit: 'ms',
    output: `${provider.name} (${provider.model})`,
  };
}

const none = (deps: AppDeps): ProbeResult | undefined =>
  resolveModelProviders(deps).length === 0
    ? { status: 'warn', observedValue: 'disabled', observedUnit: 'n/a', output: 'No model provider is configured' }
    : undefined;

const impact = 'The assistant may answer slowly or from its fallback model.';
/** Where the assistant matters: workspaces with skills installed. */
const affects: DependencyProbe['affects'] = async (tx, workspaceId) =>
  (await listActiveInstalls(tx, workspaceId)).length > 0;

export const aiMonitors: DependencyProbe[] = [
  {
    id: 'ai:latency',
    feature: 'assistant',
    slo: `the primary model answers within ${SLOW_MS / 1000} s`,
    impact,
    affects,
    timeoutMs: SLOW_MS + 2_000,
    async measure(deps, { signal }) {
      return none(deps) ?? ping(resolveModelProviders(deps)[0], signal);
    },
  },
  {
    id: 'ai:error-rate',
    feature: 'assistant',
    slo: '< 5 % of the primary model’s calls fail (5xx, timeouts) over 5 minutes',
    impact,
    affects,
    async measure(deps) {
      const disabled = none(deps);
      if (disabled) return disabled;
      const primary = resolveModelProviders(deps)[0];
      return upstreamErrorRate(`ai:${primary.name}`);
    },
  },
  {
    id: 'ai:fallback',
    feature: 'assistant',
    slo: 'the next model of the fallback chain answers',
    impact,
    affects,
    timeoutMs: SLOW_MS + 2_000,
    async measure(deps, { signal }) {
      const chain = resolveModelProviders(deps);
      if (chain.length < 2) {
        // Nothing to fall back to is not a failure of a dependency, but it is not healthy either:
        // when the one provider fails, the assistant cannot answer.
        return {
          status: 'warn',
          observedValue: chain.length,
          observedUnit: 'providers',
          output:
            chain.length === 0
              ? 'No model provider is configured'
              : `Only ${chain[0].name} is configured: no fallback model, so the assistant cannot answer while it fails`,
        };
      }
      return ping(chain[1], signal);
    },
  },
];
