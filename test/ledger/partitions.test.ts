import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { maintainPartitions } from '../../src/ledger/partition-job.js';
import { ARCHIVE_COLUMNS } from '../../src/ledger/partitions.js';
import { silentLogger } from '../../src/log/logger.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery as record } from '../helpers/deliveries.js';
import { testMetrics } from '../helpers/metrics.js';

let db: TestDatabase;
useTestDatabase('partitions', (d) => (db = d));
let archiveDir: string;
beforeAll(async () => {
  archiveDir = await mkdtemp(join(tmpdir(), 'bnpl-archive-'));
});
afterAll(async () => {
  await rm(archiveDir, { recursive: true, force: true });
});

const config = (retention?: number) => ({
  DELIVERY_PARTITIONS_AHEAD: 3,
  DELIVERY_RETENTION_MONTHS: retention,
  DELIVERY_ARCHIVE_DIR: archiveDir,
  RECON_DATA_DIR: archiveDir,
  PROVIDER_ENV: 'sandbox' as const,
});
const maintain = (now: string, retention?: number, database: Database = db) =>
  maintainPartitions({ database, log: silentLogger(), config: config(retention), metrics: testMetrics(database).metrics }, new Date(now));

async function partitionOf(id: number): Promise<string> {
  const [row] = await db.sql<{ part: string }[]>`select tableoid::regclass::text as part from webhook_deliveries where id = ${id}`;
  return row!.part;
}

async function partitions(): Promise<string[]> {
  const rows = await db.sql<{ name: string }[]>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'webhook_deliveries'::regclass order by 1`;
  return rows.map((r) => r.name);
}

describe('monthly partitions of the delivery ledger', () => {
  it('creates the current month and the months ahead once, even with two replicas racing, and again nothing', async () => {
    const second = createSqlClient(db.url, { poolMax: 2 });
    const replica: Database = databaseOver(second);
    try {
      const [a, b] = await Promise.all([maintain('2031-01-15T12:00:00Z'), maintain('2031-01-15T12:00:00Z', undefined, replica)]);
      const created = [...a.created, ...b.created].sort();
      expect(created).toEqual(['webhook_deliveries_p2031_01', 'webhook_deliveries_p2031_02', 'webhook_deliveries_p2031_03', 'webhook_deliveries_p2031_04']);
      expect(await partitions()).toEqual(expect.arrayContaining(created));
      const again = await maintain('2031-01-15T12:00:00Z');
      expect(again).toEqual({ skipped: false, created: [], archived: [] });
    } finally {
      await replica.close();
    }
  });

  it('stores a delivery at each side of a month boundary in its month, and applies a retry across the boundary once', async () => {
    const invoice = randomUUID();
    const [first] = await writeDeliveries(db.sql, [record(invoice, '2031-01-31T23:59:59.999Z')]);
    const [retry] = await writeDeliveries(db.sql, [record(invoice, '2031-02-01T00:00:00.000Z')]);
    expect(await partitionOf(first!.deliveryId)).toBe('webhook_deliveries_p2031_01');
    expect(await partitionOf(retry!.deliveryId)).toBe('webhook_deliveries_p2031_02');
    expect([first!.applied, retry!.applied, retry!.duplicate]).toEqual([true, false, true]);
    const typed = await db.sql`select 1 from invoice_events where invoice_uuid = ${invoice}`;
    expect(typed.length).toBe(1);
  });

  it('stores a delivery for a month without partition in the default one, then moves it into its month', async () => {
    const [stored] = await writeDeliveries(db.sql, [record(randomUUID(), '2035-06-10T08:00:00Z')]);
    expect(stored!.applied).toBe(true);
    expect(await partitionOf(stored!.deliveryId)).toBe('webhook_deliveries_default');
    const run = await maintain('2031-01-15T12:00:00Z');
    expect(run.created).toEqual(['webhook_deliveries_p2035_06']);
    expect(await partitionOf(stored!.deliveryId)).toBe('webhook_deliveries_p2035_06');
    const [left] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries_default`;
    expect(left!.n).toBe(0);
  });

  it('retention exports a month (every byte, fsync\'d beside a manifest) and only then drops it; a re-run does nothing', async () => {
    await maintain('2029-03-01T00:00:00Z');
    const odd = '\u0000\n\\\t\r\u00ff\u00e9';
    const written = await writeDeliveries(db.sql, [
      record(randomUUID(), '2029-03-01T00:00:00.000Z', odd),
      record(randomUUID(), '2029-03-15T10:00:00.000Z'),
      record(randomUUID(), '2029-03-31T23:59:59.999Z', odd),
    ]);
    const retired = written.map((w) => w.deliveryId);
    expect(await partitionOf(retired[0]!)).toBe('webhook_deliveries_p2029_03');
    const columns = ARCHIVE_COLUMNS.join(', ');
    const before = await db.sql.unsafe(`select ${columns} from webhook_deliveries_p2029_03 order by id`);

    // 2031-01 with 12 months kept: 2030-01 onwards stays, 2029-03 (and any older month) goes.
    const run = await maintain('2031-01-15T12:00:00Z', 12);
    const archive = run.archived.find((a) => a.table === 'webhook_deliveries_p2029_03');
    expect(archive).toMatchObject({ rows: 3, file: join(archiveDir, 'webhook_deliveries_p2029_03.copy.gz') });
    expect(await partitions()).not.toContain('webhook_deliveries_p2029_03');
    expect(await partitions()).toContain('webhook_deliveries_p2031_01');
    const [gone] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_class where relname = 'webhook_deliveries_p2029_03'`;
    expect(gone!.n).toBe(0);

    const gz = await readFile(archive!.file);
    const manifest = JSON.parse(await readFile(`${archive!.file}.json`, 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ table: 'webhook_deliveries_p2029_03', rows: 3, columns: [...ARCHIVE_COLUMNS], from: '2029-03-01T00:00:00.000Z', to: '2029-04-01T00:00:00.000Z' });
    expect(manifest.sha256).toBe(createHash('sha256').update(gz).digest('hex'));

    // The archive restores to the very rows: COPY them back into a table of the same shape.
    await db.sql`create table restored (like webhook_deliveries)`;
    const sink = await db.sql.unsafe(`copy restored (${columns}) from stdin`).writable();
    await new Promise<void>((resolve, reject) => {
      sink.on('error', reject);
      sink.on('finish', resolve);
      sink.end(gunzipSync(gz));
    });
    const after = await db.sql.unsafe(`select ${columns} from restored order by id`);
    expect(after).toEqual(before);
    expect(Buffer.from(after[0]!.raw_body as Buffer).subarray(-odd.length).toString('latin1')).toBe(odd);

    // The ledger still knows the events: a late retry of an archived one is a retry, not applied again.
    const events = await db.sql`select 1 from webhook_applied_events where delivery_id in ${db.sql(retired)}`;
    expect(events.length).toBe(3);
    expect(await maintain('2031-01-15T12:00:00Z', 12)).toEqual({ skipped: false, created: [], archived: [] });
  });

  it('finishes a month a dead run left detached, even with a late delivery of that month waiting', async () => {
    await maintain('2029-05-01T00:00:00Z');
    await writeDeliveries(db.sql, [record(randomUUID(), '2029-05-05T05:05:05Z')]);
    await db.sql`alter table webhook_deliveries detach partition webhook_deliveries_p2029_05`;
    // A late delivery of the detached month: stored in the default partition meanwhile.
    const [late] = await writeDeliveries(db.sql, [record(randomUUID(), '2029-05-20T00:00:00Z')]);
    expect(await partitionOf(late!.deliveryId)).toBe('webhook_deliveries_default');
    const run = await maintain('2031-01-15T12:00:00Z', 12);
    // (the other months made ahead from 2029-05 are past the retention too, and empty)
    expect(run.archived.filter((a) => a.rows > 0).map((a) => [a.table, a.rows])).toEqual([['webhook_deliveries_p2029_05', 1]]);
    expect(run.created).toEqual(['webhook_deliveries_p2029_05']);
    expect(await partitionOf(late!.deliveryId)).toBe('webhook_deliveries_p2029_05');
    // The next run retires the re-created month too, into a file of its own: the first archive stays.
    const next = await maintain('2031-01-15T12:00:00Z', 12);
    expect(next.archived.map((a) => [a.table, a.rows])).toEqual([['webhook_deliveries_p2029_05', 1]]);
    expect(next.archived[0]!.file).not.toBe(run.archived.find((a) => a.rows > 0)!.file);
    expect((await readFile(run.archived.find((a) => a.rows > 0)!.file)).length).toBeGreaterThan(0);
    const [gone] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_class where relname = 'webhook_deliveries_p2029_05'`;
    expect(gone!.n).toBe(0);
  });
});
