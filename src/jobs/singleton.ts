import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { lockKey, type LockName } from './lock-keys.js';
import { abandonStaleRuns, type RunTable } from './runs.js';
import { LedgerReadOnlyError, tryAcquireSessionLock, type SessionLock } from './session-lock.js';

export interface SingletonOptions {
  lock: LockName;
  environment: ProviderEnvironment;
  /** How often the holder checks it still holds the lock while the body runs. */
  heartbeatMs: number;
  /** The job's run records: rows left running by a dead holder are closed before the body runs. */
  runs?: RunTable;
  signal?: AbortSignal;
  /** Leader status: true while this process holds the lock, false once it does not. */
  onLeader?: (held: boolean) => void;
}

/** `unavailable`: the ledger refuses writes now (a standby, read-only); the reason says why. */
export type SingletonResult<T> = { skipped: true; unavailable?: string } | { skipped: false; value: T };

/**
 * The lock-and-run steps of a singleton job (the poll, a reconciliation pass), the same for the
 * daemon's schedule and for the one-off commands: take the environment's session lock or skip,
 * close the run records a dead holder left running, run the body with a signal that also aborts
 * when the lock is lost, and release the lock whatever happens.
 */
export async function runSingleton<T>(
  ctx: { database: Database; log: Logger },
  options: SingletonOptions,
  body: (signal: AbortSignal, lock: SessionLock) => Promise<T>,
): Promise<SingletonResult<T>> {
  let lock: SessionLock | undefined;
  try {
    lock = await tryAcquireSessionLock(ctx.database, lockKey(options.lock, options.environment), {
      name: options.lock,
      log: ctx.log,
      heartbeatMs: options.heartbeatMs,
    });
  } catch (error) {
    // A read-only ledger (a standby before its promotion) is not a failure of the job: it runs
    // again at its next tick, wherever the writable primary is then.
    if (!(error instanceof LedgerReadOnlyError)) throw error;
    ctx.log.warn({ job: options.lock, cause: error.message }, `${options.lock} skipped: the ledger refuses writes`);
    return { skipped: true, unavailable: error.message };
  }
  if (!lock) return { skipped: true };
  options.onLeader?.(true);
  lock.lost.addEventListener('abort', () => options.onLeader?.(false), { once: true });
  try {
    if (options.runs) {
      const stale = await abandonStaleRuns(ctx.database.sql, options.runs, options.environment);
      if (stale > 0) ctx.log.warn({ runs: stale, table: options.runs }, 'runs left running by a process that died were closed');
    }
    const signal = options.signal ? AbortSignal.any([options.signal, lock.lost]) : lock.lost;
    return { skipped: false, value: await body(signal, lock) };
  } finally {
    await lock.release();
  }
}
