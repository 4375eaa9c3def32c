// Health probes of payments (contract §9): a checkout session created at the provider each run
// (test mode; directly, past the breaker) and the share of verified webhook calls.
import { performance } from 'node:perf_hooks';
import { measureAcceptance } from '../../platform/acceptance.js';
import type { DependencyProbe } from '../../platform/module.js';
import { probeFetch } from '../../platform/upstream/index.js';
import { WEBHOOK_SOURCE } from './service.js';
import { resolvePayments } from './stripe.js';

export const paymentMonitors: DependencyProbe[] = [
  {
    id: 'payments:checkout',
    feature: 'payments',
    slo: 'a checkout session is created within 2000 ms',
    impact: 'Payment links cannot be created right now.',
    async measure(deps, { signal }) {
      const provider = resolvePayments(deps);
      if (!provider)
        return {
          status: 'warn',
          observedValue: 'disabled',
          observedUnit: 'n/a',
          output: 'Payments are not configured',
        };
      const started = performance.now();
      const res = await probeFetch('payments', `${provider.apiBase}/v1/checkout/sessions`, {
        method: 'POST',
        signal,
        headers: { authorization: `Bearer ${provider.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          mode: 'payment',
          'line_items[0][quantity]': '1',
          'line_items[0][price_data][currency]': 'usd',
          'line_items[0][price_data][unit_amount]': '100',
          'line_items[0][price_data][product_data][name]': 'Atrium health probe',
          success_url: `${deps.selfUrl()}/payments/thanks`,
        }),
      });
      const ms = Math.round(performance.now() - started);
      const body = (await res.json().catch(() => undefined)) as { id?: string } | undefined;
      if (!res.ok || !body?.id)
        return {
          status: 'fail',
          observedValue: res.status,
          observedUnit: 'http status',
          output: `The provider answered ${res.status}`,
        };
      return { status: ms <= 2_000 ? 'pass' : 'warn', observedValue: ms, observedUnit: 'ms' };
    },
  },
  {
    id: 'payments:webhook-ingress',
    feature: 'payments',
    slo: '≥ 95 % of webhook calls verified',
    impact: 'Payments may not show as paid right away.',
    measure: (deps) => measureAcceptance(deps, WEBHOOK_SOURCE, deps.config.health.intervalMs),
  },
];
