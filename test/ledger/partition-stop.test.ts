import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { maintainPartitions, startPartitionJob } from '../../src/ledger/partition-job.js';
import { ensurePartitions } from '../../src/ledger/partitions.js';
import { silentLogger } from '../../src/log/logger.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery } from '../helpers/deliveries.js';
import { testMetrics } from '../helpers/metrics.js';
import { sleep, waitFor } from '../helpers/wait.js';

/**
 * The partition job's stop (at shutdown) cuts its run short, leaving nothing half done:
 * - the archive of a retired month: its COPY to gzip takes as long as the month is big and the
 *   archive's disk slow, longer than SHUTDOWN_TIMEOUT_MS (10 s by default), and the stop used to
 *   wait for it (exit 1 at the deadline). Here the archive's `.part` is a named pipe read at
 *   ~320 KB/s, so the archive of a month of ~3 MB of deliveries takes about 10 s; the job is
 *   stopped once the archive has begun. It must stop within 2 s, leave no archive file
 *   (whole-looking or partial) and the month detached with all its rows, and the next run must
 *   archive and drop it whole.
 * - a month being created whose deliveries wait in the default partition: its DDL transaction is
 *   cancelled and rolled back whole, instead of running on (or waiting up to its 2 s lock_timeout).
 */
let db: TestDatabase;
useTestDatabase('partition_stop', (d) => (db = d), { poolMax: 4 });
let archiveDir: string;
beforeAll(async () => {
  archiveDir = await mkdtemp(join(tmpdir(), 'bnpl-archive-stop-'));
});
afterAll(async () => {
  await rm(archiveDir, { recursive: true, force: true });
});

const TABLE = 'webhook_deliveries_p2021_03';
const ROWS = 32;
const config = {
  DELIVERY_PARTITIONS_AHEAD: 0,
  DELIVERY_RETENTION_MONTHS: 12,
  DELIVERY_ARCHIVE_DIR: undefined as string | undefined,
  RECON_DATA_DIR: '',
  PROVIDER_ENV: 'sandbox' as const,
};

it('stops during a month\'s archive: no archive left, the month kept detached with its rows, archived whole by the next run', { timeout: 60_000 }, async () => {
  config.DELIVERY_ARCHIVE_DIR = archiveDir;
  config.RECON_DATA_DIR = archiveDir;
  // A month long past any retention (the job runs at the real time), with 96 KB of random bytes in
  // each delivery so its archive does not compress away.
  await ensurePartitions(db.sql, new Date('2021-03-15T00:00:00Z'), 0);
  await writeDeliveries(db.sql, Array.from({ length: ROWS }, (_, i) =>
    invoiceDelivery(randomUUID(), `2021-03-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`, randomBytes(96 * 1024).toString('latin1'))));

  const part = join(archiveDir, `${TABLE}.copy.gz.part`);
  execFileSync('mkfifo', [part]);
  let readBytes = 0;
  let started!: () => void;
  const archiving = new Promise<void>((resolve) => (started = resolve));
  // A slow disk: 16 KB every 50 ms, until the writer closes its end.
  const draining = (async () => {
    for await (const chunk of createReadStream(part, { highWaterMark: 16 * 1024 })) {
      readBytes += (chunk as Buffer).length;
      started();
      await sleep(50);
    }
  })();

  const shutdown = new AbortController();
  const job = startPartitionJob({ database: db, log: silentLogger(), config, metrics: testMetrics(db).metrics, shutdown: { signal: shutdown.signal } });
  let stop: 'stopped' | 'still running after 8 s';
  let tookMs: number;
  try {
    await archiving;
    const asked = performance.now();
    stop = await Promise.race([job.stop().then(() => 'stopped' as const), sleep(8_000).then(() => 'still running after 8 s' as const)]);
    tookMs = performance.now() - asked;
  } finally {
    shutdown.abort();
    // Frees a run that went on to fsync the pipe (it opens it to read, waiting for a writer).
    await open(part, constants.O_WRONLY | constants.O_NONBLOCK).then((h) => h.close(), () => undefined);
  }
  expect(stop, `read ${readBytes} bytes of the archive`).toBe('stopped');
  expect(tookMs).toBeLessThan(2_000);
  await draining;

  // No archive: neither a whole-looking one nor a manifest, nor the partial `.part`.
  expect((await readdir(archiveDir)).filter((f) => f.startsWith(TABLE))).toEqual([]);
  // The month is detached, not dropped: every row is still there for the next run.
  const [kept] = await db.sql<{ attached: boolean; rows: number }[]>`
    select exists (select 1 from pg_inherits where inhrelid = ${TABLE}::regclass) as attached,
           (select count(*)::int from webhook_deliveries_p2021_03) as rows`;
  expect(kept).toEqual({ attached: false, rows: ROWS });
  // The cancelled COPY left nothing running or open in a transaction on the ledger.
  const busy = await db.sql`select query from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`;
  expect(busy).toEqual([]);

  const next = await maintainPartitions({ database: db, log: silentLogger(), config, metrics: testMetrics(db).metrics });
  const archive = next.archived.find((a) => a.table === TABLE);
  expect(archive).toEqual({ table: TABLE, rows: ROWS, file: join(archiveDir, `${TABLE}.copy.gz`) });
  const lines = gunzipSync(await readFile(archive!.file)).toString('latin1').split('\n').filter((l) => l !== '');
  expect(lines.length).toBe(ROWS);
  const manifest = JSON.parse(await readFile(`${archive!.file}.json`, 'utf8')) as { rows: number };
  expect(manifest.rows).toBe(ROWS);
  const [gone] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_class where relname = ${TABLE}`;
  expect(gone!.n).toBe(0);
});

it('stops while a month being created waits to move its deliveries out of the default partition: rolled back whole', { timeout: 30_000 }, async () => {
  // A delivery of a month without partition waits in the default partition; a session holds its row.
  const [waiting] = await writeDeliveries(db.sql, [invoiceDelivery(randomUUID(), '2022-07-10T00:00:00Z')]);
  const blocker = createSqlClient(db.url, { poolMax: 1 });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const blocking = blocker.begin(async (tx) => {
    await tx`select id from webhook_deliveries_default for update`;
    locked();
    await held;
  });
  const stop = new AbortController();
  let outcome: unknown;
  let tookMs = Number.NaN;
  try {
    await isLocked;
    const creating = ensurePartitions(db.sql, new Date('2022-07-15T00:00:00Z'), 0, undefined, undefined, stop.signal).then((created) => ({ created }), (error: unknown) => error);
    await waitFor('the month\'s move to wait on the row', async () => {
      const rows = await db.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%with moved%'`;
      return rows.length > 0 ? true : undefined;
    }, 10_000, 20);
    const aborted = performance.now();
    stop.abort(new Error('partitions stopping'));
    outcome = await creating;
    tookMs = performance.now() - aborted;
  } finally {
    release();
    await blocking;
    await blocker.end({ timeout: 2 });
  }
  // Well inside the DDL's 2 s lock_timeout, which ended the wait before.
  expect(tookMs, String(outcome)).toBeLessThan(1_000);
  expect(outcome).toBeInstanceOf(Error);
  const [state] = await db.sql<{ made: boolean; part: string }[]>`
    select exists (select 1 from pg_class where relname = 'webhook_deliveries_p2022_07') as made,
           (select tableoid::regclass::text from webhook_deliveries where id = ${waiting!.deliveryId}) as part`;
  expect(state).toEqual({ made: false, part: 'webhook_deliveries_default' });
});
