import type { Registry } from 'prom-client';
import { createMetrics, type Metrics } from '../../src/daemon/metrics.js';
import type { ProviderEnvironment } from '../../src/config/schema.js';
import type { Database } from '../../src/db/database.js';
import { createRegistry } from '../../src/metrics/registry.js';

/**
 * Every metric on a private registry of its own, as openContext builds them, for components a test
 * builds without a context. The scrape-time gauges read `database` only when the registry is read.
 */
export function testMetrics(database: Database, environment: ProviderEnvironment = 'sandbox'): { registry: Registry; metrics: Metrics } {
  const registry = createRegistry({ defaultMetrics: false });
  return { registry, metrics: createMetrics(registry, database, environment) };
}
