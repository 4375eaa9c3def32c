// The payer adapter: sends a 270 to a clearinghouse/payer endpoint and returns the 271. The
// default endpoint is the payer emulator (/_emulators/payer), reached over real HTTP.
import { AppError } from '../../../../platform/errors.js';
import type { AppDeps } from '../../../../platform/types.js';
import type { Eligibility270, Eligibility271 } from './x12.js';

export interface PayerAdapter {
  checkEligibility(inquiry: Eligibility270): Promise<Eligibility271>;
}

const TIMEOUT_MS = 10_000;

export function httpPayerAdapter(baseUrl: string): PayerAdapter {
  return {
    async checkEligibility(inquiry) {
      let response: Response;
      try {
        response = await fetch(`${baseUrl}/x12/270`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify(inquiry),
          signal: AbortSignal.timeout(TIMEOUT_MS),
          redirect: 'manual',
        });
      } catch (err) {
        const timeout = (err as Error).name === 'TimeoutError';
        throw new AppError(
          timeout ? 'upstream_timeout' : 'upstream_failed',
          timeout ? 504 : 502,
          timeout ? 'The payer did not answer in time' : 'The payer could not be reached',
          { upstream: 'payer' },
        );
      }
      if (!response.ok) {
        throw new AppError('upstream_failed', 502, `The payer answered ${response.status}`, {
          upstream: 'payer',
          upstreamStatus: response.status,
        });
      }
      return (await response.json()) as Eligibility271;
    },
  };
}

/** The payer endpoint of this deployment: the emulator when emulators are on. */
export function resolvePayerAdapter(deps: AppDeps): PayerAdapter {
  if (!deps.config.emulators) {
    throw new AppError('unavailable', 503, 'No payer connection is configured for eligibility checks');
  }
  return httpPayerAdapter(`${deps.selfUrl()}/_emulators/payer`);
}
