import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { DISCREPANCY_KINDS, DISCREPANCY_STATUSES } from '../schema/tables.js';
import type { LedgerReads } from '../metrics/ledger-health.js';
import { METRIC_PREFIX } from '../metrics/registry.js';

const PASS_OUTCOMES = ['complete', 'skipped', 'failed'] as const;

export interface ReconcileMetrics {
  passes: Counter<'outcome'>;
  duration: Histogram<string>;
  open: Gauge<'kind'>;
  discrepancies: Gauge<'kind' | 'status'>;
  lockHeld: Gauge;
}

/**
 * The discrepancy gauges are read from the database at scrape time (collect), not counted in
 * memory: another replica's pass, an operator's ack over the HTTP API, or `discrepancy ack` from a
 * shell all change them, and only the table knows. One grouped count over the
 * (environment, status, kind) index per scrape. A failed read keeps the previous values rather than
 * failing the whole /metrics page, and counts in bnpl_recon_ledger_read_failures_total{source=
 * "discrepancies"}; until the first good read the series are absent rather than a false 0 (a
 * process started during a database outage once reported 0 while 89,326 were open). Every replica
 * reports the same rows: aggregate with max, never sum.
 */
export function createReconcileMetrics(registry: Registry, reads: LedgerReads, database: Database, environment: ProviderEnvironment): ReconcileMetrics {
  let discrepancies: Gauge<'kind' | 'status'> | undefined;
  let open: Gauge<'kind'> | undefined;
  const refresh = async (): Promise<void> => {
    const rows = await database.sql<{ kind: string; status: string; n: number }[]>`
      select kind::text, status::text, count(*)::int as n from discrepancies
      where environment = ${environment} group by kind, status`;
    if (!discrepancies || !open) return;
    for (const kind of DISCREPANCY_KINDS) {
      for (const status of DISCREPANCY_STATUSES) discrepancies.set({ kind, status }, 0);
      open.set({ kind }, 0);
    }
    for (const row of rows) {
      discrepancies.set({ kind: row.kind, status: row.status }, row.n);
      if (row.status === 'open') open.set({ kind: row.kind }, row.n);
    }
  };
  // Both gauges' collect() share one query per scrape.
  const collectOnce = reads.collector('discrepancies', refresh);
  open = new Gauge({
    name: `${METRIC_PREFIX}discrepancies_open`,
    help: 'Open discrepancies by kind (read from the ledger at scrape time)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect: collectOnce,
  });
  discrepancies = new Gauge({
    name: `${METRIC_PREFIX}discrepancies`,
    help: 'Discrepancies by kind and status, duplicate deliveries (created resolved) included',
    labelNames: ['kind', 'status'] as const,
    registers: [registry],
    collect: collectOnce,
  });
  const lockHeld = new Gauge({
    name: `${METRIC_PREFIX}reconcile_lock_held`,
    help: 'Leader status of the reconciliation: 1 while this process holds the reconcile lock (taken per pass), else 0',
    registers: [registry],
  });
  lockHeld.set(0);
  const passes = new Counter({
    name: `${METRIC_PREFIX}reconcile_passes_total`,
    help: 'Reconciliation passes by outcome (skipped: another process held the reconcile lock: another replica\'s pass, or an acknowledgement being written)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of PASS_OUTCOMES) passes.inc({ outcome }, 0);
  const duration = new Histogram({
    name: `${METRIC_PREFIX}reconcile_pass_duration_seconds`,
    help: 'Wall time of completed reconciliation passes',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 60, 120],
    registers: [registry],
  });
  return { passes, duration, open, discrepancies, lockHeld };
}
