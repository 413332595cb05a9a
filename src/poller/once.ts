import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { runSingleton } from '../jobs/singleton.js';
import type { Logger } from '../log/logger.js';
import type { ProviderClient } from '../provider/client.js';
import { runPoll, type PollContext, type PollRunOptions, type PollRunSummary } from './run.js';

export interface PollOnceOptions extends PollRunOptions {
  signal?: AbortSignal;
  /** After a complete run, still under the lock (the daemon reconciles here). */
  onPollComplete?: (summary: PollRunSummary) => Promise<void>;
}

/**
 * One poll as a singleton: under the environment's poll lock (skipped, undefined, when another
 * process holds it), stale runs closed first, the run aborted if the lock is lost. The daemon's
 * schedule and the `poll` command both poll through here.
 */
export async function pollOnce(
  ctx: PollContext & { config: Config; database: Database; log: Logger },
  client: ProviderClient,
  options: PollOnceOptions = {},
): Promise<PollRunSummary | undefined> {
  const { config, log } = ctx;
  const metrics = ctx.metrics.poller;
  let result;
  try {
    result = await runSingleton(
      ctx,
      {
        lock: 'poll',
        environment: config.PROVIDER_ENV,
        heartbeatMs: config.POLL_LOCK_HEARTBEAT_MS,
        runs: 'poll_runs',
        ...(options.signal ? { signal: options.signal } : {}),
        onLeader: (held) => metrics.lockHeld.set(held ? 1 : 0),
      },
      async (signal, lock) => {
        const summary = await runPoll(ctx, client, signal, { ...options, lock });
        if (summary.status === 'complete' && options.onPollComplete && !signal.aborted) {
          await options.onPollComplete(summary).catch((error: unknown) => {
            // Stopping while the hook waited (the daemon's pass queued behind one in flight is
            // refused once the reconciler stops): the next start judges what this run wrote.
            if (signal.aborted) log.info({ err: error }, 'after-poll hook not run: stopping');
            else log.error({ err: error }, 'after-poll hook failed');
          });
        }
        return summary;
      },
    );
  } catch (error) {
    metrics.skipped.inc({ reason: 'lock_error' });
    log.error({ err: error }, 'poll skipped: could not reach the database for the poll lock, or record the run');
    return undefined;
  }
  if (result.skipped) {
    metrics.skipped.inc({ reason: 'locked' });
    log.debug('poll skipped: another process holds the poll lock');
    return undefined;
  }
  return result.value;
}
