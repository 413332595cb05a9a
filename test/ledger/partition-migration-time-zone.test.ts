import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';
import { databaseOver, type Database } from '../../src/db/database.js';
import { applyMigrations, MIGRATIONS_FOLDER } from '../../src/ledger/migrate.js';
import { maintainPartitions } from '../../src/ledger/partition-job.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase } from '../helpers/database.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * docs/operating.md: "webhook_deliveries is partitioned by the UTC month of received_at ...
 * Migration 0012 converted an existing ledger in place". 0012 computed each partition's upper bound
 * as `m + interval '1 month'` on a timestamptz, which Postgres evaluates in the session's TimeZone
 * (initdb sets the server's `timezone` to the host's zone, e.g. Europe/Berlin): across a DST change
 * the bound was an hour off, so partitions overlapped (the migration failed) or left a gap
 * (deliveries stuck in the default partition). The daemon's own client pins TimeZone to UTC
 * (test/db/session-time-zone.test.ts); these run the migration on a session in the server's zone,
 * as an older release, drizzle-kit or psql would, so 0012 itself must not depend on it.
 */
let current: TestDatabase;
useTestDatabase('partition_bounds_repair', (d) => (current = d));
const folders: string[] = [];
const clients: Database[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
  for (const f of folders) await rm(f, { recursive: true, force: true });
});

async function migrationsBeforePartitioning(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'bnpl-migrations-tz-'));
  folders.push(folder);
  await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === '0011_reparse');
  journal.entries = journal.entries.slice(0, last + 1);
  await writeFile(journalPath, JSON.stringify(journal));
  return folder;
}

/**
 * A ledger migrated up to 0011 on a database whose default TimeZone is `zone` (as `timezone = '...'`
 * in postgresql.conf), over a plain client that takes the server's zone.
 */
async function ledgerIn(zone: string): Promise<Database> {
  const bare = await createTestDatabase('ledger_tz', { migrate: false });
  await bare.sql.unsafe(`alter database "${bare.name}" set timezone to '${zone}'`);
  const db = databaseOver(postgres(bare.url, { max: 4, onnotice: () => {} }));
  clients.push(db);
  const [tz] = await db.sql<{ tz: string }[]>`select current_setting('TimeZone') as tz`;
  expect(tz!.tz).toBe(zone);
  await migrate(db.db, { migrationsFolder: await migrationsBeforePartitioning() });
  return db;
}

async function insertAt(db: Database, receivedAt: string): Promise<void> {
  await db.sql`
    insert into webhook_deliveries (delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic, parse_status, applied, parser_version)
    values (${randomUUID()}, 'sandbox', ${receivedAt}, '{}'::jsonb, ${Buffer.from('{}')}, true, null, 'invalid_shape', false, 0)`;
}

it('migration 0012 on a Europe/Berlin session partitions a ledger holding October and November deliveries (bounds do not overlap across the DST change)', { timeout: 60_000 }, async () => {
  const db = await ledgerIn('Europe/Berlin');
  await insertAt(db, '2025-10-15T12:00:00Z');
  await insertAt(db, '2025-11-15T12:00:00Z');
  await expect(applyMigrations(db, silentLogger())).resolves.toBeDefined();
  const rows = await db.sql<{ part: string }[]>`select tableoid::regclass::text as part from webhook_deliveries order by received_at`;
  expect(rows.map((r) => r.part)).toEqual(['webhook_deliveries_p2025_10', 'webhook_deliveries_p2025_11']);
});

it('migration 0012 on a Europe/Berlin session bounds March at April 1st 00:00 UTC: a delivery of its last UTC hour is in March, not in the default partition', { timeout: 60_000 }, async () => {
  const db = await ledgerIn('Europe/Berlin');
  await insertAt(db, '2026-03-10T12:00:00Z');
  await insertAt(db, '2026-03-31T23:30:00Z');
  await applyMigrations(db, silentLogger());
  const [bound] = await db.sql<{ bound: string }[]>`
    select pg_get_expr(c.relpartbound, c.oid) as bound from pg_class c
    where c.relname = 'webhook_deliveries_p2026_03'`;
  // Rendered in the session's zone: March 1st 00:00Z and April 1st 00:00Z in Berlin.
  expect(bound!.bound).toBe("FOR VALUES FROM ('2026-03-01 01:00:00+01') TO ('2026-04-01 02:00:00+02')");
  // The hourly maintenance leaves it there too.
  const dir = await mkdtemp(join(tmpdir(), 'bnpl-archive-tz-'));
  folders.push(dir);
  const config = { DELIVERY_PARTITIONS_AHEAD: 1, DELIVERY_RETENTION_MONTHS: undefined, DELIVERY_ARCHIVE_DIR: dir, RECON_DATA_DIR: dir, PROVIDER_ENV: 'sandbox' as const };
  await maintainPartitions({ database: db, log: silentLogger(), config, metrics: testMetrics(db).metrics }, new Date());
  const rows = await db.sql<{ at: string; part: string }[]>`
    select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as at, tableoid::regclass::text as part from webhook_deliveries order by received_at`;
  expect(rows).toEqual([
    { at: '2026-03-10T12:00', part: 'webhook_deliveries_p2026_03' },
    { at: '2026-03-31T23:30', part: 'webhook_deliveries_p2026_03' },
  ]);
});

/** The query docs/upgrading.md gives to find months whose bounds are not their UTC month. */
async function documentedBoundsCheck(): Promise<string> {
  const doc = await readFile(join(import.meta.dirname, '..', '..', 'docs', 'upgrading.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Partitions made by migration 0012 outside UTC'));
  const query = /```sql\n([\s\S]*?)```/.exec(section)?.[1];
  expect(query, 'a sql block in "Partitions made by migration 0012 outside UTC"').toBeDefined();
  return query!;
}

it('the maintenance run re-bounds months an earlier 0012 bounded off their UTC month (an hour late, days early), moving their deliveries, and the query docs/upgrading.md gives finds them before and none after', { timeout: 60_000 }, async () => {
  const db = current;
  // As the earlier 0012 left them: October 2024 on a Europe/Berlin server (ends Nov 1st 01:00Z),
  // March 2025 on an America/New_York one (ends March 28th 23:00Z).
  await db.sql.unsafe(`create table webhook_deliveries_p2024_10 partition of webhook_deliveries for values from ('2024-10-01T00:00:00Z') to ('2024-11-01T01:00:00Z')`);
  await db.sql.unsafe(`create table webhook_deliveries_p2025_03 partition of webhook_deliveries for values from ('2025-03-01T00:00:00Z') to ('2025-03-28T23:00:00Z')`);
  for (const at of ['2024-10-15T12:00:00Z', '2024-11-01T00:30:00Z', '2025-03-10T12:00:00Z', '2025-03-29T12:00:00Z']) await insertAt(db, at);
  const check = await documentedBoundsCheck();
  // The operator's psql session: the server's zone, not the daemon's pinned UTC.
  const found = await db.sql.begin(async (tx) => {
    await tx.unsafe(`set local timezone = 'America/New_York'`);
    return tx.unsafe<{ partition: string }[]>(check);
  });
  expect(found.map((r) => r.partition)).toEqual(['webhook_deliveries_p2024_10', 'webhook_deliveries_p2025_03']);

  const dir = await mkdtemp(join(tmpdir(), 'bnpl-archive-bounds-'));
  folders.push(dir);
  const config = { DELIVERY_PARTITIONS_AHEAD: 0, DELIVERY_RETENTION_MONTHS: undefined, DELIVERY_ARCHIVE_DIR: dir, RECON_DATA_DIR: dir, PROVIDER_ENV: 'sandbox' as const };
  const run = await maintainPartitions({ database: db, log: silentLogger(), config, metrics: testMetrics(db).metrics }, new Date('2025-03-15T12:00:00Z'));
  expect(run.created).toEqual(['webhook_deliveries_p2024_11']);

  const rows = await db.sql<{ at: string; part: string }[]>`
    select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as at, tableoid::regclass::text as part
    from webhook_deliveries where received_at < '2025-04-01T00:00:00Z' order by received_at`;
  expect(rows).toEqual([
    { at: '2024-10-15T12:00', part: 'webhook_deliveries_p2024_10' },
    { at: '2024-11-01T00:30', part: 'webhook_deliveries_p2024_11' },
    { at: '2025-03-10T12:00', part: 'webhook_deliveries_p2025_03' },
    { at: '2025-03-29T12:00', part: 'webhook_deliveries_p2025_03' },
  ]);
  expect(await db.sql.unsafe(check)).toEqual([]);
});
