import type { Shutdown } from '../lifecycle/shutdown.js';
import { startJob } from '../jobs/job.js';
import type { ProviderClient } from '../provider/client.js';
import { pollOnce } from './once.js';
import type { PollContext, PollRunSummary } from './run.js';

/** What the poll job needs: the poll's own context and the process's stop signal. */
export type PollJobContext = PollContext & { shutdown: Pick<Shutdown, 'signal'> };

export interface PollScheduler {
  /** Idempotent: stops the schedule, aborts a run in progress, waits for it, releases the lock. */
  stop(): Promise<void>;
  /** A scheduled tick: skipped (undefined) while a run is in flight. Resolves when it is done. */
  tick(): Promise<PollRunSummary | undefined>;
  /**
   * A poll that starts after the call (queued behind one in flight, which may have fetched its
   * pages before the caller's change): undefined when another process holds the poll lock.
   */
  runNow(): Promise<PollRunSummary | undefined>;
}

/**
 * Polls on POLL_SCHEDULE as a job (jobs/job.ts): a tick is skipped while the previous run is still
 * going, and when another process holds the poll lock (pollOnce). The lock is taken per run and
 * released after it, so a replica whose polls keep failing does not keep the job from a healthy
 * one. After a complete run `onPollComplete` runs (reconciliation), still under the lock so it sees
 * a finished run.
 */
export function startPollScheduler(
  ctx: PollJobContext,
  client: ProviderClient,
  onPollComplete?: (summary: PollRunSummary) => Promise<void>,
): PollScheduler {
  const metrics = ctx.metrics.poller;
  const job = startJob({
    name: 'poll',
    schedule: ctx.config.POLL_SCHEDULE,
    log: ctx.log,
    stopOn: ctx.shutdown.signal,
    onSkipped: (reason) => {
      metrics.skipped.inc({ reason });
      ctx.log.warn('poll skipped: the previous run is still going');
    },
    run: (signal) => pollOnce(ctx, client, { signal, ...(onPollComplete ? { onPollComplete } : {}) }),
  });
  return { tick: () => job.tick(), runNow: () => job.runNow(), stop: () => job.stop() };
}
