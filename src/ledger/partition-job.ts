import { join } from 'node:path';
import type { Shutdown } from '../lifecycle/shutdown.js';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { startJob } from '../jobs/job.js';
import { assertStillHeld, LockLostError } from '../jobs/session-lock.js';
import { runSingleton } from '../jobs/singleton.js';
import type { Logger } from '../log/logger.js';
import type { PartitionMetrics, PartitionRunOutcome } from './metrics.js';
import { ensurePartitions, partitionState, repairPartitionBounds, retirePartitions } from './partitions.js';
import type { ArchivedPartition } from './partition-archive.js';

export interface PartitionContext {
  database: Database;
  log: Logger;
  config: Pick<Config, 'DELIVERY_PARTITIONS_AHEAD' | 'DELIVERY_RETENTION_MONTHS' | 'DELIVERY_ARCHIVE_DIR' | 'RECON_DATA_DIR' | 'PROVIDER_ENV'>;
  metrics: { partitions: PartitionMetrics };
}

export interface PartitionMaintenance {
  /** Another replica held the partitions lock, or took it over while this run held it (lockLost). */
  skipped: boolean;
  lockLost?: boolean;
  created: string[];
  archived: ArchivedPartition[];
}

/** How often the daemon looks: hourly, so a delivery parked in the default partition moves within the hour. */
const EVERY_MS = 60 * 60 * 1000;

export function archiveDirectory(config: Pick<Config, 'DELIVERY_ARCHIVE_DIR' | 'RECON_DATA_DIR'>): string {
  return config.DELIVERY_ARCHIVE_DIR ?? join(config.RECON_DATA_DIR, 'archive');
}

/**
 * One maintenance run: months past the retention archived and dropped, then partitions created
 * ahead (partitions.ts), under the partitions lock so replicas take turns (a replica that finds
 * it held skips: the holder does the same work). Counted in `metrics.partitions` (metrics.ts)
 * whatever its outcome; a run that did the work, complete or failed, then reads the months ahead
 * and the default partition's rows into the gauges (kept as they were if that read fails too).
 *
 * `signal` (the job's stop, at shutdown) stops the run between its steps and cuts an archive in
 * progress short (partitions.ts retirePartitions): a month's archive is a COPY of the whole month,
 * which can outlast SHUTDOWN_TIMEOUT_MS on a big ledger. The run then fails (the job logs it as
 * stopped), leaving nothing half done that the next run does not finish.
 */
export async function maintainPartitions(
  ctx: PartitionContext,
  now: Date = new Date(),
  signal?: AbortSignal,
): Promise<PartitionMaintenance> {
  const { config } = ctx;
  const metrics = ctx.metrics.partitions;
  let outcome: PartitionRunOutcome = 'failed';
  let ran = false;
  const created: string[] = [];
  const archived: ArchivedPartition[] = [];
  try {
    // Retiring first: it finishes a month a dead run left detached, whose table would otherwise stand
    // in the way of re-creating that month for a late delivery.
    // heartbeatMs 0: a run is short, and every DDL transaction checks the lock itself (the fence), so
    // a run whose lock session ended (killed, an idle timeout, a dropped connection) commits nothing
    // more; without it the new holder's CREATE TABLE of the same month failed
    // (test/ledger/partition-fencing.test.ts).
    // The steps take the job's signal, not the body's: that one also aborts when the lock session
    // ends, which the fences already turn into a skip (LockLostError) where it matters.
    const result = await runSingleton(ctx, { lock: 'partitions', environment: config.PROVIDER_ENV, heartbeatMs: 0 }, async (_lost, lock) => {
      ran = true;
      const fence = (tx: Parameters<typeof assertStillHeld>[0]) => assertStillHeld(tx, lock);
      const sql = ctx.database.sql;
      await retirePartitions(sql, now, config.DELIVERY_RETENTION_MONTHS, archiveDirectory(config), ctx.log, (done) => {
        archived.push(done);
        // Months exported and dropped: one environment's rows of a month both share leave the month.
        if (done.environment === undefined) metrics.archived.inc();
      }, fence, signal, config.PROVIDER_ENV);
      // Before creating: a month cut short or overlong by 0012 (partitions.ts) would otherwise keep
      // its deliveries in the default partition, or refuse the next month's partition.
      await repairPartitionBounds(sql, ctx.log, fence, signal);
      await ensurePartitions(sql, now, config.DELIVERY_PARTITIONS_AHEAD, (name) => {
        created.push(name);
        metrics.created.inc();
      }, fence, signal);
    });
    outcome = result.skipped ? 'skipped' : 'complete';
    return { skipped: result.skipped, created, archived };
  } catch (error) {
    // The lock went to another replica mid-run, which does the rest: a skip, as when it held the
    // lock from the start, not a failure.
    if (!(error instanceof LockLostError)) throw error;
    ctx.log.warn({ err: error, created, archived: archived.map((a) => a.table) }, 'delivery partition maintenance stopped: the partitions lock was lost to another replica');
    outcome = 'skipped';
    return { skipped: true, lockLost: true, created, archived };
  } finally {
    metrics.runs.inc({ outcome });
    if (outcome === 'complete') metrics.lastSuccess.set(Date.now() / 1000);
    // Not after a stop: the shutdown does not wait for a count of the default partition.
    if (ran && !signal?.aborted) {
      await partitionState(ctx.database.sql, now).then(
        (state) => {
          metrics.ahead.set(state.ahead);
          metrics.defaultRows.set(state.defaultRows);
        },
        (error: unknown) => ctx.log.warn({ err: error }, 'delivery partitions not read after maintenance: their gauges keep the last values'),
      );
    }
  }
}

/** The daemon's partition maintenance: at start, then hourly. */
export function startPartitionJob(ctx: PartitionContext & { shutdown: Pick<Shutdown, 'signal'> }): { runNow(): Promise<PartitionMaintenance>; stop(): Promise<void> } {
  const log = ctx.log.child({ component: 'partitions' });
  const job = startJob({
    name: 'partitions',
    schedule: { everyMs: EVERY_MS },
    runAtStart: true,
    log,
    stopOn: ctx.shutdown.signal,
    run: async (signal) => {
      const done = await maintainPartitions({ database: ctx.database, log, config: ctx.config, metrics: ctx.metrics }, new Date(), signal);
      if (done.created.length > 0) log.info({ created: done.created }, 'delivery partitions created');
      return done;
    },
  });
  return { runNow: () => job.runNow(), stop: () => job.stop() };
}
