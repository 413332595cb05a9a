import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maintainPartitions } from '../../src/ledger/partition-job.js';
import { silentLogger } from '../../src/log/logger.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery } from '../helpers/deliveries.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * One ledger, two daemons (CONTRACT.md: "one daemon serves one environment, and two daemons may
 * share one database"). The sandbox daemon is set to keep one month of deliveries; the production
 * daemon keeps every delivery forever (DELIVERY_RETENTION_MONTHS unset). The sandbox daemon's
 * maintenance must not archive and drop production's raw deliveries, nor write them into the
 * sandbox's archive folder.
 */
let db: TestDatabase;
useTestDatabase('envs_retention', (d) => (db = d));
let sandboxArchive: string;
beforeAll(async () => {
  sandboxArchive = await mkdtemp(join(tmpdir(), 'bnpl-envs-archive-'));
});
afterAll(async () => {
  await rm(sandboxArchive, { recursive: true, force: true });
});

const maintain = (now: string, env: 'sandbox' | 'production', retention: number | undefined) =>
  maintainPartitions(
    {
      database: db,
      log: silentLogger(),
      config: { DELIVERY_PARTITIONS_AHEAD: 3, DELIVERY_RETENTION_MONTHS: retention, DELIVERY_ARCHIVE_DIR: sandboxArchive, RECON_DATA_DIR: sandboxArchive, PROVIDER_ENV: env },
      metrics: testMetrics(db, env).metrics,
    },
    new Date(now),
  );

describe('delivery retention with both environments in one ledger', () => {
  it("the sandbox daemon's DELIVERY_RETENTION_MONTHS does not archive and drop production's deliveries", async () => {
    // Production's daemon made the month and stored a delivery in it; it keeps everything.
    await maintain('2029-03-01T00:00:00Z', 'production', undefined);
    const [prod] = await writeDeliveries(db.sql, [{ ...invoiceDelivery(randomUUID(), '2029-03-15T10:00:00.000Z'), environment: 'production' }]);
    const [sbx] = await writeDeliveries(db.sql, [invoiceDelivery(randomUUID(), '2029-03-15T11:00:00.000Z')]);
    expect(prod).toBeDefined();
    expect(sbx).toBeDefined();

    // Much later, the sandbox daemon's hourly maintenance, set to keep one month.
    const run = await maintain('2031-01-15T12:00:00Z', 'sandbox', 1);
    // The sandbox may retire its own delivery (it asked to), but production's stays in the ledger,
    // and is not exported to the sandbox daemon's archive folder.
    const [left] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_deliveries where environment = 'production' and id = ${prod!.deliveryId}`;
    expect(left!.n, `production delivery ${prod!.deliveryId} after the sandbox daemon's maintenance (archived: ${run.archived.map((a) => `${a.table} ${a.rows} rows`).join(', ')})`).toBe(1);

    // The sandbox's own delivery of the month is archived, in a file named after its environment,
    // and gone from the ledger; the month itself stays.
    // (The empty months made ahead in 2029 are archived and dropped whole: no environment's rows.)
    const march = run.archived.filter((a) => a.table === 'webhook_deliveries_p2029_03');
    expect(run.archived.filter((a) => a.table !== 'webhook_deliveries_p2029_03').every((a) => a.rows === 0 && a.environment === undefined)).toBe(true);
    expect(march.map((a) => ({ table: a.table, rows: a.rows, environment: a.environment, file: basename(a.file) }))).toEqual([
      { table: 'webhook_deliveries_p2029_03', rows: 1, environment: 'sandbox', file: 'webhook_deliveries_p2029_03.sandbox.copy.gz' },
    ]);
    const manifest = JSON.parse(await readFile(`${march[0]!.file}.json`, 'utf8')) as { environment: string; rows: number };
    expect(manifest).toMatchObject({ environment: 'sandbox', rows: 1 });
    const archivedLines = gunzipSync(await readFile(march[0]!.file)).toString('utf8').trim().split('\n');
    expect(archivedLines).toHaveLength(1);
    expect(archivedLines[0]!.split('\t')[0]).toBe(String(sbx!.deliveryId));
    const [sandboxLeft] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where environment = 'sandbox'`;
    expect(sandboxLeft!.n).toBe(0);

    // A second run finds nothing of its own left there: nothing more archived.
    expect((await maintain('2031-01-15T13:00:00Z', 'sandbox', 1)).archived).toEqual([]);

    // Production's daemon, once it keeps one month too, finds only its own rows: the month goes whole.
    const production = await maintain('2031-01-15T14:00:00Z', 'production', 1);
    expect(production.archived.filter((a) => a.rows > 0).map((a) => ({ table: a.table, rows: a.rows, environment: a.environment }))).toEqual([
      { table: 'webhook_deliveries_p2029_03', rows: 1, environment: undefined },
    ]);
    const [month] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_class where relname = 'webhook_deliveries_p2029_03'`;
    expect(month!.n).toBe(0);
  });
});
