// Voice providers behind one interface: the primary (OpenAI-style audio/speech) and a second
// provider with its own protocol (ElevenLabs-style text-to-speech) as the fallback. By default both
// are the `tts` emulator; ATRIUM_TTS_API_KEY / ATRIUM_TTS_FALLBACK_API_KEY point them at the real ones.
import type { AppDeps } from '../../platform/types.js';
import { createUpstream, UpstreamError } from '../../platform/upstream/index.js';

export interface VoiceProvider {
  name: 'primary' | 'fallback';
  /** Where it answers and how (the health probes call it directly, past the breaker). */
  request(text: string): { url: string; headers: Record<string, string>; body: string };
  synthesize(text: string, requestId?: string): Promise<Buffer>;
}

export class VoiceFailed extends Error {}

function provider(
  name: VoiceProvider['name'],
  build: (text: string) => { url: string; headers: Record<string, string>; body: string },
): VoiceProvider {
  const upstream = createUpstream({
    name: `tts:${name}`,
    timeoutMs: 10_000,
    retries: 0,
    maxResponseBytes: 8 * 1024 * 1024,
    breaker: { consecutiveFailures: 3, failureRatio: 1 },
  });
  return {
    name,
    request: build,
    async synthesize(text, requestId) {
      const { url, headers, body } = build(text);
      try {
        const res = await upstream.request({ method: 'POST', url, headers, body, requestId });
        if (!res.ok) throw new VoiceFailed(`${name} voice answered ${res.status}`);
        return res.body;
      } catch (err) {
        if (err instanceof UpstreamError) throw new VoiceFailed(`${name} voice unreachable (${err.kind})`);
        throw err;
      }
    },
  };
}

/** The voice chain of this deployment, in order (empty: speech answers unavailable). */
export function resolveVoices(deps: AppDeps): VoiceProvider[] {
  const emulator = deps.config.emulators ? `${deps.selfUrl()}/_emulators/tts` : undefined;
  const primaryKey = deps.config.tts?.apiKey ?? (emulator ? 'tts-local-key' : undefined);
  const fallbackKey = deps.config.tts?.fallbackApiKey ?? (emulator ? 'tts-local-key' : undefined);
  const chain: VoiceProvider[] = [];
  if (primaryKey) {
    const base = deps.config.tts?.apiKey ? 'https://api.openai.com' : emulator;
    chain.push(
      provider('primary', (text) => ({
        url: `${base}/v1/audio/speech`,
        headers: { authorization: `Bearer ${primaryKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tts-1', input: text, voice: 'alloy', response_format: 'wav' }),
      })),
    );
  }
  if (fallbackKey) {
    const base = deps.config.tts?.fallbackApiKey ? 'https://api.elevenlabs.io' : `${emulator}/fallback`;
    chain.push(
      provider('fallback', (text) => ({
        url: `${base}/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM?output_format=pcm_16000`,
        headers: { 'xi-api-key': fallbackKey, 'content-type': 'application/json', accept: 'audio/wav' },
        body: JSON.stringify({ text, model_id: 'eleven_multilingual_v2' }),
      })),
    );
  }
  return chain;
}
