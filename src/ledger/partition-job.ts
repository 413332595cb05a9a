import { join } from 'node:path';
import type { AppContext } from '../app/context.js';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { startJob } from '../jobs/job.js';
import { runSingleton } from '../jobs/singleton.js';
import type { Logger } from '../log/logger.js';
import { ensurePartitions, retirePartitions, type ArchivedPartition } from './partitions.js';

export interface PartitionMaintenance {
  skipped: boolean;
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
 * it held skips: the holder does the same work).
 */
export async function maintainPartitions(
  ctx: { database: Database; log: Logger; config: Pick<Config, 'DELIVERY_PARTITIONS_AHEAD' | 'DELIVERY_RETENTION_MONTHS' | 'DELIVERY_ARCHIVE_DIR' | 'RECON_DATA_DIR' | 'PROVIDER_ENV'> },
  now: Date = new Date(),
): Promise<PartitionMaintenance> {
  const { config } = ctx;
  // Retiring first: it finishes a month a dead run left detached, whose table would otherwise stand
  // in the way of re-creating that month for a late delivery.
  const result = await runSingleton(ctx, { lock: 'partitions', environment: config.PROVIDER_ENV, heartbeatMs: 0 }, async () => {
    const archived = await retirePartitions(ctx.database.sql, now, config.DELIVERY_RETENTION_MONTHS, archiveDirectory(config), ctx.log);
    return { created: await ensurePartitions(ctx.database.sql, now, config.DELIVERY_PARTITIONS_AHEAD), archived };
  });
  return result.skipped ? { skipped: true, created: [], archived: [] } : { skipped: false, ...result.value };
}

/** The daemon's partition maintenance: at start, then hourly. */
export function startPartitionJob(ctx: AppContext): { runNow(): Promise<PartitionMaintenance>; stop(): Promise<void> } {
  const log = ctx.log.child({ component: 'partitions' });
  const job = startJob({
    name: 'partitions',
    schedule: { everyMs: EVERY_MS },
    runAtStart: true,
    log,
    stopOn: ctx.shutdown.signal,
    run: async () => {
      const done = await maintainPartitions({ database: ctx.database, log, config: ctx.config });
      if (done.created.length > 0) log.info({ created: done.created }, 'delivery partitions created');
      return done;
    },
  });
  return { runNow: () => job.runNow(), stop: () => job.stop() };
}
