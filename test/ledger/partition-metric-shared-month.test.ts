import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maintainPartitions } from '../../src/ledger/partition-job.js';
import { silentLogger } from '../../src/log/logger.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery } from '../helpers/deliveries.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * bnpl_recon_delivery_partitions_archived_total: "Monthly partitions past DELIVERY_RETENTION_MONTHS
 * exported to DELIVERY_ARCHIVE_DIR and dropped" (src/ledger/metrics.ts, docs/operating.md: "months
 * exported to DELIVERY_ARCHIVE_DIR and dropped"). A month shared with the other environment is not
 * dropped (partitions.ts retirePartitions): only this environment's rows of it are exported and
 * deleted. It must not count as a month archived and dropped, else the same month counts once per
 * environment and again when it is dropped whole.
 */
let db: TestDatabase;
useTestDatabase('partition_metric_shared', (d) => (db = d));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bnpl-partition-metric-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the archived-partitions counter with a month both environments share', () => {
  it('counts only months that were dropped', async () => {
    const production = testMetrics(db, 'production').metrics;
    const sandbox = testMetrics(db, 'sandbox').metrics;
    const cfg = (env: 'sandbox' | 'production', retention: number | undefined) => ({
      DELIVERY_PARTITIONS_AHEAD: 0, DELIVERY_RETENTION_MONTHS: retention, DELIVERY_ARCHIVE_DIR: dir, RECON_DATA_DIR: dir, PROVIDER_ENV: env,
    });
    await maintainPartitions({ database: db, log: silentLogger(), config: cfg('production', undefined), metrics: production }, new Date('2029-03-01T00:00:00Z'));
    await writeDeliveries(db.sql, [{ ...invoiceDelivery(randomUUID(), '2029-03-15T10:00:00.000Z'), environment: 'production' }]);
    await writeDeliveries(db.sql, [invoiceDelivery(randomUUID(), '2029-03-15T11:00:00.000Z')]);

    const months = async () => (await db.sql<{ name: string }[]>`
      select c.relname as name from pg_class c where c.relname like 'webhook\\_deliveries\\_p%' and c.relkind in ('r', 'p')`).map((r) => r.name);
    const before = await months();
    const run = await maintainPartitions({ database: db, log: silentLogger(), config: cfg('sandbox', 1), metrics: sandbox }, new Date('2031-01-15T12:00:00Z'));
    const after = await months();
    const dropped = before.filter((m) => !after.includes(m));
    const counted = (await sandbox.partitions.archived.get()).values.reduce((n, v) => n + v.value, 0);
    expect(after).toContain('webhook_deliveries_p2029_03'); // the shared month is kept, as intended
    expect(counted, `dropped: ${dropped.join(', ') || 'none'}; archived: ${run.archived.map((a) => `${a.table}${a.environment ? `.${a.environment}` : ''}`).join(', ')}`).toBe(dropped.length);
  });
});
