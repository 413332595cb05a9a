import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { maintainPartitions } from '../../src/ledger/partition-job.js';
import { silentLogger } from '../../src/log/logger.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery } from '../helpers/deliveries.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * The partition maintenance metrics (src/ledger/metrics.ts) as /metrics prints them, after real runs
 * against Postgres: months created ahead, a run whose archiving fails with a delivery waiting in the
 * default partition, the run that then archives, drops and moves it, and a run skipped for the lock.
 */

let db: TestDatabase;
useTestDatabase('partition_metrics', (d) => (db = d));
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'bnpl-partition-metrics-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The value of the sample `series` (name and labels as printed) in Prometheus text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('partition maintenance metrics', () => {
  it('count runs, created and archived months, and read the months ahead and the default partition after each run', async () => {
    const { registry, metrics } = testMetrics(db);
    const archiveDir = join(scratch, 'archive');
    const maintain = (now: string, retention: number | undefined, dir = archiveDir) =>
      maintainPartitions(
        {
          database: db,
          log: silentLogger(),
          config: { DELIVERY_PARTITIONS_AHEAD: 3, DELIVERY_RETENTION_MONTHS: retention, DELIVERY_ARCHIVE_DIR: dir, RECON_DATA_DIR: scratch, PROVIDER_ENV: 'sandbox' },
          metrics,
        },
        new Date(now),
      );
    const read = async () => {
      const text = await registry.metrics();
      return {
        complete: sample(text, 'bnpl_recon_delivery_partition_runs_total{outcome="complete"}'),
        failed: sample(text, 'bnpl_recon_delivery_partition_runs_total{outcome="failed"}'),
        skipped: sample(text, 'bnpl_recon_delivery_partition_runs_total{outcome="skipped"}'),
        lastSuccess: sample(text, 'bnpl_recon_delivery_partition_last_success_timestamp_seconds'),
        created: sample(text, 'bnpl_recon_delivery_partitions_created_total'),
        archived: sample(text, 'bnpl_recon_delivery_partitions_archived_total'),
        ahead: sample(text, 'bnpl_recon_delivery_partitions_ahead'),
        defaultRows: sample(text, 'bnpl_recon_delivery_default_partition_rows'),
      };
    };

    // The months migration 0012 gave the template (the month it ran in): retired with the others below.
    const migrated = (
      await db.sql<{ name: string }[]>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'webhook_deliveries'::regclass and c.relname like 'webhook\\_deliveries\\_p%' order by 1`
    ).map((r) => r.name);
    expect(migrated.every((name) => name < 'webhook_deliveries_p2040_03')).toBe(true);

    // Before any run: the counters at 0, the gauges absent (not a 0 that reads as 1970 or "no month ahead").
    const fresh = await registry.metrics();
    expect(fresh).toContain('# TYPE bnpl_recon_delivery_partition_last_success_timestamp_seconds gauge');
    expect(await read()).toEqual({ complete: 0, failed: 0, skipped: 0, lastSuccess: undefined, created: 0, archived: 0, ahead: undefined, defaultRows: undefined });

    // 2040-03 and the 3 months after it, none of which the template database has.
    const before = Date.now() / 1000;
    const first = await maintain('2040-03-10T12:00:00Z', undefined);
    const after = Date.now() / 1000;
    expect(first.created).toEqual(['webhook_deliveries_p2040_03', 'webhook_deliveries_p2040_04', 'webhook_deliveries_p2040_05', 'webhook_deliveries_p2040_06']);
    const afterFirst = await read();
    expect(afterFirst).toMatchObject({ complete: 1, failed: 0, skipped: 0, created: 4, archived: 0, ahead: 3, defaultRows: 0 });
    expect(afterFirst.lastSuccess).toBeGreaterThanOrEqual(Math.floor(before));
    expect(afterFirst.lastSuccess).toBeLessThanOrEqual(after);

    // One delivery in a month that will be retired, one for a month without partition (default).
    await writeDeliveries(db.sql, [invoiceDelivery(randomUUID(), '2040-03-05T05:00:00Z'), invoiceDelivery(randomUUID(), '2046-06-01T00:00:00Z')]);

    // Archiving fails (the archive directory is a file): the run detaches 2040-03..05 (past 12 months
    // from 2041-06) and the migrated months, fails on the first export, and never creates months, so the 2046-06 delivery
    // stays in the default partition and 2041-06 (the current month) has no partition.
    const notADirectory = join(scratch, 'not-a-directory');
    await writeFile(notADirectory, 'x');
    await expect(maintain('2041-06-10T12:00:00Z', 12, notADirectory)).rejects.toThrow();
    const afterFailure = await read();
    expect(afterFailure).toEqual({ complete: 1, failed: 1, skipped: 0, lastSuccess: afterFirst.lastSuccess, created: 4, archived: 0, ahead: -1, defaultRows: 1 });

    // With a directory again: the detached months are archived and dropped, 2041-06..09 created
    // and 2046-06 for its waiting delivery.
    const fixed = await maintain('2041-06-10T12:00:00Z', 12);
    expect(fixed.archived.map((a) => [a.table, a.rows])).toEqual([
      ...migrated.map((name) => [name, 0]),
      ['webhook_deliveries_p2040_03', 1],
      ['webhook_deliveries_p2040_04', 0],
      ['webhook_deliveries_p2040_05', 0],
    ]);
    expect(JSON.parse(await readFile(`${fixed.archived[migrated.length]!.file}.json`, 'utf8'))).toMatchObject({ table: 'webhook_deliveries_p2040_03', rows: 1 });
    expect(fixed.created).toEqual(['webhook_deliveries_p2041_06', 'webhook_deliveries_p2041_07', 'webhook_deliveries_p2041_08', 'webhook_deliveries_p2041_09', 'webhook_deliveries_p2046_06']);
    const afterFix = await read();
    expect(afterFix).toMatchObject({ complete: 2, failed: 1, skipped: 0, created: 9, archived: migrated.length + 3, ahead: 3, defaultRows: 0 });
    expect(afterFix.lastSuccess).toBeGreaterThan(afterFirst.lastSuccess!);

    // Another replica holds the partitions lock: skipped, and the gauges stay as this replica last read them.
    const holder = await db.sql.reserve();
    try {
      await holder`select pg_advisory_lock(${lockKey('partitions').toString()}::bigint)`;
      expect(await maintain('2041-09-10T12:00:00Z', 12)).toEqual({ skipped: true, created: [], archived: [] });
    } finally {
      await holder`select pg_advisory_unlock(${lockKey('partitions').toString()}::bigint)`;
      holder.release();
    }
    expect(await read()).toEqual({ ...afterFix, skipped: 1 });
  });
});
