import cron from 'node-cron';
import type { AppContext } from '../app/context.js';
import type { ProviderClient } from '../provider/client.js';
import { tryAcquirePollLock } from './lock.js';
import { createPollerMetrics } from './metrics.js';
import { runPoll, type PollRunSummary } from './run.js';
import { abandonStalePollRuns } from './runs.js';

export interface PollScheduler {
  /** Idempotent: stops the schedule, aborts a run in progress, waits for it, releases the lock. */
  stop(): Promise<void>;
  /** Runs a tick now (tests, operators); same rules as a scheduled one. Resolves when it is done. */
  tick(): Promise<PollRunSummary | undefined>;
}

/**
 * Polls on POLL_SCHEDULE. A tick is skipped while the previous run is still going (no overlap in
 * this process) and when another process holds the poll lock (no overlap across replicas). The lock
 * is taken per run and released after it, so a replica whose polls keep failing does not keep the
 * job from a healthy one. After a complete run `onPollComplete` runs (reconciliation), still under
 * the lock so it sees a finished run.
 */
export function startPollScheduler(
  ctx: AppContext,
  client: ProviderClient,
  onPollComplete?: (summary: PollRunSummary) => Promise<void>,
): PollScheduler {
  const { config, log, database } = ctx;
  const metrics = createPollerMetrics(ctx.registry);
  const controller = new AbortController();
  let current: Promise<PollRunSummary | undefined> | undefined;

  const runOnce = async (): Promise<PollRunSummary | undefined> => {
    let lock;
    try {
      lock = await tryAcquirePollLock(database, config.PROVIDER_ENV, log, config.POLL_LOCK_HEARTBEAT_MS);
    } catch (error) {
      metrics.skipped.inc({ reason: 'lock_error' });
      log.error({ err: error }, 'poll skipped: could not reach the database for the poll lock');
      return undefined;
    }
    if (lock === undefined) {
      metrics.skipped.inc({ reason: 'locked' });
      log.debug('poll skipped: another process holds the poll lock');
      return undefined;
    }
    metrics.lockHeld.set(1);
    lock.lost.addEventListener('abort', () => metrics.lockHeld.set(0), { once: true });
    try {
      const stale = await abandonStalePollRuns(database.sql, config.PROVIDER_ENV);
      if (stale > 0) log.warn({ runs: stale }, 'marked poll runs left running by a dead process as aborted');
      const signal = AbortSignal.any([controller.signal, lock.lost, ctx.shutdown.signal]);
      const summary = await runPoll(ctx, client, signal);
      if (summary.status === 'complete' && onPollComplete && !signal.aborted) {
        await onPollComplete(summary).catch((error: unknown) => log.error({ err: error }, 'after-poll hook failed'));
      }
      return summary;
    } catch (error) {
      log.error({ err: error }, 'poll run could not be recorded');
      return undefined;
    } finally {
      metrics.lockHeld.set(0);
      await lock.release();
    }
  };

  const tick = (): Promise<PollRunSummary | undefined> => {
    if (controller.signal.aborted) return Promise.resolve(undefined);
    if (current) {
      metrics.skipped.inc({ reason: 'overlap' });
      log.warn('poll skipped: the previous run is still going');
      return Promise.resolve(undefined);
    }
    const run = runOnce().finally(() => {
      current = undefined;
    });
    current = run;
    return run;
  };

  const task = cron.schedule(
    config.POLL_SCHEDULE,
    async () => {
      await tick();
    },
    // Not node-cron's noOverlap: it would drop the tick silently; `tick` skips it and counts it.
    { name: 'poll' },
  );

  let stopping: Promise<void> | undefined;
  return {
    tick,
    stop() {
      stopping ??= (async () => {
        await task.stop();
        await task.destroy();
        controller.abort(new Error('poller stopping'));
        await current?.catch(() => undefined);
      })();
      return stopping;
    },
  };
}
