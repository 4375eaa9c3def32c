// Health probes of speech (contract §9): the primary voice answers a one-word synthesis in time
// (directly, past the breaker), its failure share over 5 minutes of real use, and the fallback voice
// answers so a failing primary has somewhere to go.
import { performance } from 'node:perf_hooks';
import type { DependencyProbe, ProbeResult } from '../../platform/module.js';
import { probeFetch, upstreamErrorRate } from '../../platform/upstream/index.js';
import { resolveVoices, type VoiceProvider } from './voices.js';

const SLOW_MS = 1_500;

async function ping(voice: VoiceProvider | undefined, signal: AbortSignal): Promise<ProbeResult> {
  if (!voice)
    return {
      status: 'warn',
      observedValue: 'disabled',
      observedUnit: 'n/a',
      output: 'No such voice provider configured',
    };
  const { url, headers, body } = voice.request('ping');
  const started = performance.now();
  const res = await probeFetch(`tts-${voice.name}`, url, { method: 'POST', headers, body, signal });
  const bytes = (await res.arrayBuffer()).byteLength;
  const ms = Math.round(performance.now() - started);
  if (!res.ok || bytes < 44)
    return {
      status: 'fail',
      observedValue: res.status,
      observedUnit: 'http status',
      output: `${voice.name} voice answered ${res.status}`,
    };
  return {
    status: ms <= SLOW_MS ? 'pass' : 'warn',
    observedValue: ms,
    observedUnit: 'ms',
    output: `${bytes} bytes of audio`,
  };
}

const impact = 'Reading aloud may be slow or use the backup voice.';

export const speechMonitors: DependencyProbe[] = [
  {
    id: 'tts:latency',
    feature: 'speech',
    slo: `the primary voice synthesizes a word within ${SLOW_MS} ms`,
    impact,
    measure: (deps, { signal }) =>
      ping(
        resolveVoices(deps).find((v) => v.name === 'primary'),
        signal,
      ),
  },
  {
    id: 'tts:error-rate',
    feature: 'speech',
    slo: '< 5 % of the primary voice’s calls fail over 5 minutes',
    impact,
    async measure() {
      return upstreamErrorRate('tts:primary');
    },
  },
  {
    id: 'tts:fallback',
    feature: 'speech',
    slo: 'the fallback voice answers',
    impact,
    measure: (deps, { signal }) =>
      ping(
        resolveVoices(deps).find((v) => v.name === 'fallback'),
        signal,
      ),
  },
];
