import cron from 'node-cron';
import type { AppContext } from '../app/context.js';
import { runReconcilePass } from './pass.js';
import type { PassSummary } from './types.js';

export interface ReconcileScheduler {
  /** Stops the schedule and waits for a pass in flight. Idempotent. */
  stop(): Promise<void>;
  /** A pass now (e.g. right after a poll): waits for one in flight, then runs a fresh one. */
  runNow(): Promise<PassSummary>;
}

/**
 * Runs a pass on RECONCILE_SCHEDULE. Passes in this process never overlap (one promise chain);
 * across replicas the advisory lock decides. A tick that finds a pass running is skipped rather
 * than queued: the running pass already covers the ledger, and queueing would pile up behind a
 * slow database. runNow() is queued instead, because its caller wants a pass over data it just wrote.
 */
export function startReconcileScheduler(ctx: AppContext): ReconcileScheduler {
  // One serial chain: every pass starts after the previous one settled.
  let chain: Promise<void> = Promise.resolve();
  let queued = 0;
  let stopping: Promise<void> | undefined;

  const enqueue = (): Promise<PassSummary> => {
    queued += 1;
    const pass = chain.then(() => runReconcilePass(ctx)).finally(() => {
      queued -= 1;
    });
    chain = pass.then(
      () => undefined,
      () => undefined,
    );
    return pass;
  };

  const task = cron.schedule(
    ctx.config.RECONCILE_SCHEDULE,
    async () => {
      if (queued > 0 || stopping) return;
      await enqueue().catch((error: unknown) => ctx.log.error({ err: error }, 'scheduled reconcile pass failed'));
    },
    { name: 'reconcile', noOverlap: true },
  );

  const scheduler: ReconcileScheduler = {
    runNow() {
      if (stopping) return Promise.reject(new Error('reconcile scheduler is stopping'));
      return enqueue();
    },
    stop() {
      stopping ??= (async () => {
        await task.stop();
        await task.destroy();
        await chain;
      })();
      return stopping;
    },
  };
  ctx.shutdown.register('reconcile-scheduler', () => scheduler.stop());
  return scheduler;
}
