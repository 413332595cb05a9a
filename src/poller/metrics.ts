import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { METRIC_PREFIX } from '../metrics/registry.js';

export const POLL_STATUSES = ['complete', 'failed', 'aborted'] as const;
export const POLL_SKIP_REASONS = ['overlap', 'locked', 'lock_error'] as const;

export interface PollerMetrics {
  runs: Counter<'status'>;
  skipped: Counter<'reason'>;
  duration: Histogram;
  pages: Counter;
  refetchedPages: Counter;
  ordersLastRun: Gauge;
  lockHeld: Gauge;
}

/** The poller's metrics, built once on the context's registry (daemon/metrics.ts). */
export function createPollerMetrics(registry: Registry): PollerMetrics {
  const p = METRIC_PREFIX;
  const runs = new Counter({ name: `${p}poll_runs_total`, help: 'Finished poll runs by status', labelNames: ['status'] as const, registers: [registry] });
  const skipped = new Counter({
    name: `${p}poll_skipped_total`,
    help: 'Scheduled polls not run: the previous run was still going (overlap), another replica holds the poll lock (locked), or the database could not be reached to take the lock or record the run (lock_error)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const duration = new Histogram({ name: `${p}poll_run_duration_seconds`, help: 'Wall time of one poll run', buckets: [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800], registers: [registry] });
  const pages = new Counter({ name: `${p}poll_pages_total`, help: 'Order pages merged into the ledger', registers: [registry] });
  const refetchedPages = new Counter({ name: `${p}poll_refetched_pages_total`, help: 'Pages read again because orders arrived while neighbouring pages were in flight', registers: [registry] });
  const ordersLastRun = new Gauge({ name: `${p}poll_orders_last_run`, help: 'Distinct orders seen by the last finished poll run', registers: [registry] });
  const lockHeld = new Gauge({ name: `${p}poll_lock_held`, help: 'Leader status of the poll: 1 from taking the poll lock until releasing or losing it (taken per run), else 0', registers: [registry] });
  for (const status of POLL_STATUSES) runs.inc({ status }, 0);
  for (const reason of POLL_SKIP_REASONS) skipped.inc({ reason }, 0);
  return { runs, skipped, duration, pages, refetchedPages, ordersLastRun, lockHeld };
}
