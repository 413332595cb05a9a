import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { maintainPartitions } from '../../src/ledger/partition-job.js';
import { ensurePartitions, retirePartitions } from '../../src/ledger/partitions.js';
import { silentLogger } from '../../src/log/logger.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery } from '../helpers/deliveries.js';
import { testMetrics } from '../helpers/metrics.js';
import { waitFor } from '../helpers/wait.js';

/**
 * docs/operating.md: partitions are created "one replica at a time (an advisory lock)";
 * src/jobs/session-lock.ts: "The holder must notice such a loss too, or two processes would run at
 * once". The partition job holds its lock without a heartbeat, so each of its DDL transactions
 * checks the lock (assertStillHeld) and a run whose lock session is gone (killed, an idle-session
 * timeout, a proxy dropping an idle connection) commits nothing beside the next holder. And a month
 * another run created, detached or dropped meanwhile is done, not an error.
 */
let db: TestDatabase;
useTestDatabase('partition_fencing', (d) => (db = d));
let dir: string;
const extra: Database[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bnpl-partition-fence-'));
});
afterAll(async () => {
  for (const d of extra) await d.close();
  await rm(dir, { recursive: true, force: true });
});

const maintain = (database: Database, now: string) =>
  maintainPartitions(
    { database, log: silentLogger(), config: { DELIVERY_PARTITIONS_AHEAD: 0, DELIVERY_RETENTION_MONTHS: undefined, DELIVERY_ARCHIVE_DIR: dir, RECON_DATA_DIR: dir, PROVIDER_ENV: 'sandbox' }, metrics: testMetrics(database).metrics },
    new Date(now),
  );

/** Waits until some statement containing `text` waits for a lock. */
const waitingOn = (text: string) =>
  waitFor(`a statement with "${text}" waiting for a lock`, async () => {
    const rows = await db.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like ${`%${text}%`}`;
    return rows.length > 0 ? true : undefined;
  }, 5_000, 20);

it('a partition run whose lock session was lost commits no partition: it ends as a skip and the next holder creates the month', { timeout: 60_000 }, async () => {
  const now = '2040-01-15T12:00:00Z';
  // A delivery waiting in the default partition for its month (2040-01 has no partition yet).
  const [waiting] = await writeDeliveries(db.sql, [invoiceDelivery(randomUUID(), '2040-01-10T00:00:00Z')]);
  const replicaA = databaseOver(createSqlClient(db.url, { poolMax: 2 }));
  const replicaB = databaseOver(createSqlClient(db.url, { poolMax: 2 }));
  const blocker = createSqlClient(db.url, { poolMax: 1 });
  extra.push(replicaA, replicaB);
  try {
    // Hold the waiting row for a moment, so replica A's run is mid-way when its lock session goes.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const blocking = blocker.begin(async (tx) => {
      await tx`select id from webhook_deliveries_default for update`;
      locked();
      await held;
    });
    await isLocked;
    const a = maintain(replicaA, now).catch((e: unknown) => String(e));
    await waitingOn('with moved');
    // Its lock session ends (as pg_terminate_backend, an idle timeout or a dropped connection would).
    await db.sql.unsafe(`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted
      and database = (select oid from pg_database where datname = current_database())
      and ((classid::bigint << 32) | objid::bigint) = ${lockKey('partitions').toString()} and objsubid = 1`);
    const b = maintain(replicaB, now).catch((e: unknown) => String(e));
    await new Promise((r) => setTimeout(r, 300));
    release();
    await blocking;
    expect({ a: await a, b: await b }).toEqual({
      a: { skipped: true, lockLost: true, created: [], archived: [] },
      b: { skipped: false, created: ['webhook_deliveries_p2040_01'], archived: [] },
    });
    const [row] = await db.sql<{ part: string }[]>`select tableoid::regclass::text as part from webhook_deliveries where id = ${waiting!.deliveryId}`;
    expect(row!.part).toBe('webhook_deliveries_p2040_01');
  } finally {
    await blocker.end({ timeout: 5 });
  }
});

it('creating a month that another transaction creates meanwhile is a no-op, not a duplicate-key failure', { timeout: 60_000 }, async () => {
  const other = createSqlClient(db.url, { poolMax: 1 });
  try {
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let made!: () => void;
    const isMade = new Promise<void>((r) => (made = r));
    // The other run's transaction, as ensurePartitions writes it, its table made (not yet attached)
    // when this one lists the partitions and creates the same month.
    const creating = other.begin(async (tx) => {
      await tx`create table webhook_deliveries_p2041_03 (like webhook_deliveries including defaults)`;
      made();
      await held;
      await tx.unsafe(`alter table webhook_deliveries attach partition webhook_deliveries_p2041_03 for values from ('2041-03-01T00:00:00Z') to ('2041-04-01T00:00:00Z')`);
    });
    await isMade;
    const ours = ensurePartitions(db.sql, new Date('2041-03-15T12:00:00Z'), 0);
    await waitingOn('create table');
    commit();
    await creating;
    expect(await ours).toEqual([]);
  } finally {
    await other.end({ timeout: 5 });
  }
});

it('retiring a month that another transaction detaches, archives and drops meanwhile is a no-op', { timeout: 60_000 }, async () => {
  const now = new Date('2042-06-15T12:00:00Z');
  expect(await ensurePartitions(db.sql, new Date('2042-01-15T12:00:00Z'), 0)).toEqual(['webhook_deliveries_p2042_01']);
  const other = createSqlClient(db.url, { poolMax: 1 });
  const archiveDir = join(dir, 'retire-race');
  try {
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let done!: () => void;
    const isDone = new Promise<void>((r) => (done = r));
    const retiring = other.begin(async (tx) => {
      await tx.unsafe('alter table webhook_deliveries detach partition webhook_deliveries_p2042_01');
      await tx.unsafe('drop table webhook_deliveries_p2042_01');
      done();
      await held;
    });
    await isDone;
    const ours = retirePartitions(db.sql, now, 3, archiveDir, silentLogger());
    await waitingOn('detach partition');
    commit();
    await retiring;
    expect((await ours).filter((a) => a.table === 'webhook_deliveries_p2042_01')).toEqual([]);
    expect(await readdir(archiveDir).catch(() => [])).not.toContain('webhook_deliveries_p2042_01.copy.gz');
  } finally {
    await other.end({ timeout: 5 });
  }
});
