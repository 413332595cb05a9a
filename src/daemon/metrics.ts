import type { Registry } from 'prom-client';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { createPartitionMetrics, type PartitionMetrics } from '../ledger/metrics.js';
import { createLedgerHealthMetrics, createLedgerReads } from '../metrics/ledger-health.js';
import { createInvoiceMetrics, type InvoiceMetrics } from '../payout-import/metrics.js';
import { createPollerMetrics, type PollerMetrics } from '../poller/metrics.js';
import { createProviderMetrics, type ProviderMetrics } from '../provider/metrics.js';
import { createReconcileMetrics, type ReconcileMetrics } from '../reconcile/metrics.js';
import { createReparseMetrics, type ReparseMetrics } from '../reparse/metrics.js';
import { createStatementMetrics, type StatementMetrics } from '../statements/metrics.js';
import { createWebhookMetrics, type WebhookMetrics } from '../webhooks/metrics.js';
import { createOperatorMetrics, type OperatorMetrics } from '../http/sign-in.js';

/** Every metric of the process, by the folder whose definitions (its metrics.ts) they come from. */
export interface Metrics {
  webhooks: WebhookMetrics;
  provider: ProviderMetrics;
  poller: PollerMetrics;
  reconcile: ReconcileMetrics;
  reparse: ReparseMetrics;
  statements: StatementMetrics;
  partitions: PartitionMetrics;
  invoices: InvoiceMetrics;
  operator: OperatorMetrics;
}

/**
 * Builds every metric once, on the context's private registry (a registry refuses a name
 * registered twice), and hands each component its own. The ledger-health gauges (build info,
 * database up, last complete poll and pass) have no component: they are read at scrape time.
 */
export function createMetrics(registry: Registry, database: Database, environment: ProviderEnvironment): Metrics {
  const reads = createLedgerReads(registry);
  createLedgerHealthMetrics(registry, reads, database, environment);
  return {
    webhooks: createWebhookMetrics(registry),
    provider: createProviderMetrics(registry),
    poller: createPollerMetrics(registry),
    reconcile: createReconcileMetrics(registry, reads, database, environment),
    reparse: createReparseMetrics(registry),
    statements: createStatementMetrics(registry),
    partitions: createPartitionMetrics(registry),
    invoices: createInvoiceMetrics(registry, reads, database, environment),
    operator: createOperatorMetrics(registry),
  };
}
