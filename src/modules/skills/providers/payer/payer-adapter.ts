// The payer adapter: sends a 270 to a clearinghouse/payer endpoint and returns the 271. The
// default endpoint is the payer emulator (/_emulators/payer), reached over real HTTP.
import { AppError } from '../../../../platform/errors.js';
import type { AppDeps } from '../../../../platform/types.js';
import {
  createUpstream,
  UpstreamError,
  type UpstreamResponse,
  upstreamAppError,
} from '../../../../platform/upstream/index.js';
import type { Eligibility270, Eligibility271 } from './x12.js';

export interface PayerAdapter {
  checkEligibility(inquiry: Eligibility270): Promise<Eligibility271>;
}

const TIMEOUT_MS = 10_000;

export function httpPayerAdapter(baseUrl: string, options: { requestId?: string } = {}): PayerAdapter {
  // One attempt per inquiry (a POST is not retried); the breaker makes a failing payer fail fast.
  const payer = createUpstream({ name: 'payer', baseUrl, timeoutMs: TIMEOUT_MS, retries: 0 });
  return {
    async checkEligibility(inquiry) {
      let response: UpstreamResponse;
      try {
        response = await payer.request({
          method: 'POST',
          path: '/x12/270',
          headers: { accept: 'application/json' },
          json: inquiry,
          requestId: options.requestId,
        });
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        if (err.kind === 'timeout') {
          throw new AppError('upstream_timeout', 504, 'The payer did not answer in time', { upstream: 'payer' });
        }
        throw upstreamAppError(err, 'The payer', { upstream: 'payer' });
      }
      if (!response.ok) {
        throw new AppError('upstream_failed', 502, `The payer answered ${response.status}`, {
          upstream: 'payer',
          upstreamStatus: response.status,
        });
      }
      try {
        return response.json<Eligibility271>();
      } catch {
        throw new AppError('upstream_failed', 502, 'The payer answered with invalid JSON', { upstream: 'payer' });
      }
    },
  };
}

/** The payer endpoint of this deployment: the emulator when emulators are on. */
export function resolvePayerAdapter(deps: AppDeps, requestId?: string): PayerAdapter {
  if (!deps.config.emulators) {
    throw new AppError('unavailable', 503, 'No payer connection is configured for eligibility checks');
  }
  return httpPayerAdapter(`${deps.selfUrl()}/_emulators/payer`, { requestId });
}
