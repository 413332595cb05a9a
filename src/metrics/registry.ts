import { Registry, collectDefaultMetrics } from 'prom-client';

export const METRIC_PREFIX = 'bnpl_recon_';

/**
 * A private registry (never prom-client's global one) so tests and two daemons in one process do
 * not share counters. Each capability defines its own metrics on it (see each folder's metrics.ts).
 */
export function createRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  return registry;
}
