import { Registry, collectDefaultMetrics } from 'prom-client';

export const METRIC_PREFIX = 'bnpl_recon_';

/**
 * A private registry (never prom-client's global one) so tests and two daemons in one process do
 * not share counters. Each capability's metrics.ts defines its metrics; daemon/metrics.ts builds them all
 * once on the context's registry.
 */
export function createRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics !== false) {
    // No prefix: process_* and nodejs_* are the names the usual Node.js dashboards and alerts query.
    collectDefaultMetrics({ register: registry });
    // prom-client exports these gauges with a _total suffix, which Prometheus reserves for counters
    // (`promtool check metrics` flags them); nodejs_active_{handles,requests,resources} carry the
    // same numbers by type.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      registry.removeSingleMetric(name);
    }
  }
  return registry;
}

/**
 * Leader status read from the lock gauges (`bnpl_recon_<job>_lock_held`), so `/readyz`'s body and
 * `/metrics` say the same thing: true while this process holds the job's lock. A job whose gauge is
 * absent (the poller without a provider) is not led here.
 */
export async function leadershipFromGauges(registry: Registry, jobs: readonly string[]): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const job of jobs) {
    const gauge = registry.getSingleMetric(`${METRIC_PREFIX}${job}_lock_held`);
    const values = gauge ? (await gauge.get()).values : [];
    out[job] = values.some((v) => v.value === 1);
  }
  return out;
}
