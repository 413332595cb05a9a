import { Counter, Gauge, type Registry } from 'prom-client';
import { METRIC_PREFIX } from '../metrics/registry.js';

/** What became of one partition maintenance run (skipped: another replica held the partitions lock). */
export const PARTITION_RUN_OUTCOMES = ['complete', 'skipped', 'failed'] as const;
export type PartitionRunOutcome = (typeof PARTITION_RUN_OUTCOMES)[number];

export interface PartitionMetrics {
  runs: Counter<'outcome'>;
  lastSuccess: Gauge;
  created: Counter;
  archived: Counter;
  ahead: Gauge;
  defaultRows: Gauge;
}

/**
 * The delivery ledger's partition maintenance (partition-job.ts), counted by the replica that ran
 * it. The gauges are set at the end of each run this replica did, not at scrape time: the run
 * already reads the partitions, and a count of the default partition on every scrape would scan
 * it just when deliveries pile up there. Until this replica's first run has set them they are
 * absent, not a 0 that reads as "never succeeded in 1970" or "no month ahead". Replicas take turns
 * under one lock, so a replica's gauges can be an hour older than another's: aggregate with max.
 */
export function createPartitionMetrics(registry: Registry): PartitionMetrics {
  const p = METRIC_PREFIX;
  const runs = new Counter({
    name: `${p}delivery_partition_runs_total`,
    help: 'Delivery partition maintenance runs by outcome (skipped: another replica held the partitions lock)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of PARTITION_RUN_OUTCOMES) runs.inc({ outcome }, 0);
  const lastSuccess = new Gauge({
    name: `${p}delivery_partition_last_success_timestamp_seconds`,
    help: "Unix time this replica's last complete partition maintenance run finished",
    registers: [registry],
  });
  const created = new Counter({
    name: `${p}delivery_partitions_created_total`,
    help: 'Monthly partitions of webhook_deliveries created (months ahead, and months whose deliveries waited in the default partition)',
    registers: [registry],
  });
  const archived = new Counter({
    name: `${p}delivery_partitions_archived_total`,
    help: 'Monthly partitions past DELIVERY_RETENTION_MONTHS exported to DELIVERY_ARCHIVE_DIR and dropped',
    registers: [registry],
  });
  const ahead = new Gauge({
    name: `${p}delivery_partitions_ahead`,
    help: 'Months after the current one (UTC) with partitions, without a gap, at the end of the last run (-1: not even the current month)',
    registers: [registry],
  });
  const defaultRows = new Gauge({
    name: `${p}delivery_default_partition_rows`,
    help: 'Deliveries in webhook_deliveries_default at the end of the last run: stored for a month the run could not give a partition',
    registers: [registry],
  });
  // prom-client gives a gauge without labels a 0 from the start; remove() makes it absent until set.
  for (const gauge of [lastSuccess, ahead, defaultRows]) gauge.remove();
  return { runs, lastSuccess, created, archived, ahead, defaultRows };
}
