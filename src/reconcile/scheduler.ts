import type { Shutdown } from '../lifecycle/shutdown.js';
import type { Config } from '../config/schema.js';
import { startJob } from '../jobs/job.js';
import { runReconcilePass, type ReconcileContext } from './pass.js';
import type { PassSummary } from './types.js';

export interface ReconcileScheduler {
  /** Stops the schedule, stops a pass in flight (rolled back, recorded failed) and waits for it. Idempotent. */
  stop(): Promise<void>;
  /** A pass now (e.g. right after a poll): waits for one in flight, then runs a fresh one. */
  runNow(): Promise<PassSummary>;
}

/**
 * Runs a pass on RECONCILE_SCHEDULE as a job (jobs/job.ts): passes in this process never overlap;
 * across replicas the reconcile lock decides (pass.ts). A tick that finds a pass running is
 * skipped; runNow() is queued, because its caller wants a pass over data it just wrote. The
 * composition root registers its stop.
 */
export function startReconcileScheduler(ctx: ReconcileContext & { config: Pick<Config, 'RECONCILE_SCHEDULE'>; shutdown: Pick<Shutdown, 'signal'> }): ReconcileScheduler {
  const job = startJob({
    name: 'reconcile',
    schedule: ctx.config.RECONCILE_SCHEDULE,
    log: ctx.log,
    stopOn: ctx.shutdown.signal,
    // The job's signal, so its stop cancels the pass's statement and rolls the pass back: a full
    // pass at 1,000,000 orders with their invoices takes ~25 s (bench/README.md), past the 10 s
    // default SHUTDOWN_TIMEOUT_MS.
    run: (signal) => runReconcilePass(ctx, undefined, { origin: 'daemon', signal }),
  });
  return { runNow: () => job.runNow(), stop: () => job.stop() };
}
