import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { METRIC_PREFIX } from '../metrics/registry.js';

// unauthorized: 401 or 403, a revoked or wrong PROVIDER_API_KEY (alerted apart from other 4xx).
export const REQUEST_OUTCOMES = ['ok', 'throttled', 'unauthorized', 'server_error', 'client_error', 'bad_response', 'network_error'] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];
export const PROVIDER_OPERATIONS = ['orders', 'webhook_keys', 'webhook_register'] as const;
export type ProviderOperation = (typeof PROVIDER_OPERATIONS)[number];

export interface ProviderMetrics {
  requests: Counter<'operation' | 'outcome'>;
  retries: Counter<'operation'>;
  duration: Histogram<'operation'>;
  rateLimit: Gauge;
  rateLimitWait: Histogram<'operation'>;
  /** The client's limiter, whose allowed rate the rate gauge reports from then on. */
  reportRate(currentRate: () => number): void;
}

/**
 * The provider client's metrics, built once on the context's registry (daemon/metrics.ts). The rate
 * gauge is read from the client's limiter at scrape time, so it is exported only once a client
 * says which limiter that is (`reportRate`): a process without a provider client has no allowed
 * rate to report, rather than a false 0.
 */
export function createProviderMetrics(registry: Registry): ProviderMetrics {
  const requests = new Counter({
    name: `${METRIC_PREFIX}provider_requests_total`,
    help: 'HTTP attempts to the provider API, by operation and outcome (retries counted)',
    labelNames: ['operation', 'outcome'] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: `${METRIC_PREFIX}provider_retries_total`,
    help: 'Attempts beyond the first, by operation',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${METRIC_PREFIX}provider_request_duration_seconds`,
    help: 'Duration of one HTTP attempt to the provider, until the body is read',
    labelNames: ['operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const rateLimit = new Gauge({
    name: `${METRIC_PREFIX}provider_rate_limit_requests_per_second`,
    help: 'The client-side request rate currently allowed (RATE_LIMIT_RPS, lowered after 429s)',
    registers: [],
    collect() {
      if (currentRate) this.set(currentRate());
    },
  });
  let currentRate: (() => number) | undefined;
  const reportRate = (rate: () => number): void => {
    if (!currentRate) registry.registerMetric(rateLimit);
    currentRate = rate;
  };
  const rateLimitWait = new Histogram({
    name: `${METRIC_PREFIX}provider_rate_limit_wait_seconds`,
    help: 'Time each attempt waited for the client-side rate limiter before it was sent, by operation',
    labelNames: ['operation'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  for (const operation of PROVIDER_OPERATIONS) {
    retries.inc({ operation }, 0);
    for (const outcome of REQUEST_OUTCOMES) requests.inc({ operation, outcome }, 0);
  }
  return { requests, retries, duration, rateLimit, rateLimitWait, reportRate };
}
