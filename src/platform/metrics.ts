// The process's Prometheus registry: every platform mechanism and module registers its metrics here,
// and GET /metrics exposes it.
import client from 'prom-client';

export const metricsRegistry = new client.Registry();
client.collectDefaultMetrics({ register: metricsRegistry });

export const httpDuration = new client.Histogram({
  name: 'atrium_http_request_duration_seconds',
  help: 'HTTP request duration by route pattern and status',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});
