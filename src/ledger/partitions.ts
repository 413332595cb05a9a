import type { Sql, TransactionSql } from 'postgres';
import type { Logger } from '../log/logger.js';
import type { ProviderEnvironment } from '../config/schema.js';
import { DEFAULT_PARTITION, PARTITION_PREFIX, addMonths, isRetired, monthOfPartition, monthStart, monthsCoveredAhead, monthsToEnsure, partitionName } from './partition-months.js';
import { transaction } from '../db/transaction.js';
import { errorCode } from '../db/errors.js';
import { archivePartition, type ArchivedPartition } from './partition-archive.js';
import { cancelOnAbort } from '../db/cancel-on-abort.js';

export { ARCHIVE_COLUMNS, type ArchivedPartition } from './partition-archive.js';

/**
 * DDL waits at most this long for its lock. Attaching takes the default partition's exclusive lock
 * and detaching the parent's; queued behind a long statement they would hold up every acknowledgement
 * queued behind them, so they give up instead and the next run tries again.
 */
const DDL_LOCK_TIMEOUT = '2s';

/**
 * Lock fencing for the DDL (jobs/session-lock.ts assertStillHeld): run first and last in each of
 * its transactions, so a run whose partitions lock was lost commits nothing beside the new holder.
 */
export type Fence = (tx: TransactionSql | Sql) => Promise<void>;
const unfenced: Fence = async () => {};

/**
 * One DDL transaction of a run, rolled back whole when `signal` (the job's stop) aborts: its
 * statement is cancelled (db/cancel-on-abort.ts), so a month whose rows are still moving out of the
 * default partition does not hold the stop. Not for the drop of an archived month (retirePartitions).
 */
async function stoppable<T>(sql: Sql, signal: AbortSignal | undefined, body: (tx: TransactionSql) => Promise<T>): Promise<T> {
  return transaction(sql, async (tx) => {
    const unwatch = signal ? await cancelOnAbort(sql, tx, signal) : undefined;
    try {
      return await body(tx);
    } finally {
      await unwatch?.();
    }
  });
}

async function attachedPartitions(sql: Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'webhook_deliveries'::regclass`;
  return rows.map((r) => r.name);
}

/**
 * Creates the partitions of the current month and `ahead` months after it, and of every month whose
 * deliveries wait in the default partition (a delivery for a month without partition is stored
 * there, never refused). Each is created standalone, given its waiting rows, and attached, in one
 * transaction: CREATE TABLE … PARTITION OF would lock the whole table against inserts, ATTACH only
 * the default partition. Idempotent; returns the names created, and tells `onCreated` of each as it
 * commits, so a run that fails later still counts the ones it made. `signal` stops it (stoppable).
 */
export async function ensurePartitions(sql: Sql, now: Date, ahead: number, onCreated?: (name: string) => void, fence: Fence = unfenced, signal?: AbortSignal): Promise<string[]> {
  const waiting = await sql<{ month: Date }[]>`
    select distinct date_trunc('month', received_at, 'UTC') as month from ${sql(DEFAULT_PARTITION)}`;
  const wanted = new Map<string, Date>();
  for (const month of [...monthsToEnsure(now, ahead), ...waiting.map((w) => monthStart(new Date(w.month)))]) wanted.set(partitionName(month), month);
  const existing = new Set(await attachedPartitions(sql));
  const created: string[] = [];
  for (const [name, month] of [...wanted].sort(([a], [b]) => a.localeCompare(b))) {
    if (existing.has(name)) continue;
    signal?.throwIfAborted();
    const from = month.toISOString();
    const to = addMonths(month, 1).toISOString();
    try {
      await stoppable(sql, signal, async (tx) => {
        await fence(tx);
        await tx.unsafe(`set local lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
        await tx`create table ${tx(name)} (like webhook_deliveries including defaults)`;
        await attachMonth(tx, name, from, to);
        await fence(tx);
      });
    } catch (error) {
      // Another run made it since this one listed the partitions (a replica that had lost the lock,
      // or a run before the fence existed): its CREATE TABLE waited for that one's commit and failed
      // with 42P07, or 23505 on pg_type_typname_nsp_index when both ran at once
      // (test/ledger/partition-fencing.test.ts). The month is there: nothing left to do.
      if (!isDuplicateTable(error) || !(await attachedPartitions(sql)).includes(name)) throw error;
      continue;
    }
    created.push(name);
    onCreated?.(name);
  }
  return created;
}

/** A range partition's bounds as pg_get_expr prints them. */
const BOUNDS_PATTERN = String.raw`^FOR VALUES FROM \('([^']+)'\) TO \('([^']+)'\)$`;

/**
 * Re-bounds the month partitions whose bounds are not their UTC month. Migration 0012 before its fix
 * computed upper bounds in the session's TimeZone: on a server outside UTC a month could end an hour
 * early (the last hour's deliveries in the default partition for good) or late (the next month's
 * partition then refused: "would overlap"), or days early west of UTC (`Feb 28 19:00 EST + 1 month`
 * is March 28th) (test/ledger/partition-migration-time-zone.test.ts). Each is detached, its rows
 * outside the month go back through the parent (to their month or the default partition), the
 * default partition's rows of the month come in, and it is attached with the right bounds, in one
 * transaction. Returns the names re-bounded. `signal` stops it (stoppable).
 */
export async function repairPartitionBounds(sql: Sql, log: Logger, fence: Fence = unfenced, signal?: AbortSignal): Promise<string[]> {
  // The bounds as Postgres prints them carry their offset, so the casts give the instants whatever
  // the session's zone.
  const rows = await sql<{ name: string; lower: number | null; upper: number | null }[]>`
    select c.relname as name, (extract(epoch from b[1]::timestamptz) * 1000)::float8 as lower, (extract(epoch from b[2]::timestamptz) * 1000)::float8 as upper
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    left join lateral regexp_match(pg_get_expr(c.relpartbound, c.oid), ${BOUNDS_PATTERN}) as b on true
    where i.inhparent = 'webhook_deliveries'::regclass
    order by c.relname`;
  const repaired: string[] = [];
  for (const { name, lower, upper } of rows) {
    const month = monthOfPartition(name);
    if (!month || lower === null || upper === null) continue;
    const from = month.toISOString();
    const to = addMonths(month, 1).toISOString();
    if (lower === month.getTime() && upper === addMonths(month, 1).getTime()) continue;
    signal?.throwIfAborted();
    await stoppable(sql, signal, async (tx) => {
      await fence(tx);
      await tx.unsafe(`set local lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
      await tx.unsafe(`alter table webhook_deliveries detach partition "${name}"`);
      await tx`
        with strays as (
          delete from ${tx(name)} where not (received_at >= ${from}::timestamptz and received_at < ${to}::timestamptz) returning *
        )
        insert into webhook_deliveries select * from strays`;
      await attachMonth(tx, name, from, to);
      await fence(tx);
    });
    log.warn({ partition: name, was: { from: new Date(lower).toISOString(), to: new Date(upper).toISOString() }, now: { from, to } }, 'delivery partition bounds repaired to its UTC month');
    repaired.push(name);
  }
  return repaired;
}

/**
 * Retires the months older than the retention (partition-months.ts isRetired): each is detached,
 * exported to `<archiveDir>/<partition>.copy.gz` (Postgres COPY text format, gzip; the columns in
 * ARCHIVE_COLUMNS order) with a `.json` beside it (bounds, columns, row count, sha256), both
 * fsync'd, and only then dropped. The rows written are counted and must equal the table's count,
 * else the table stays (detached, logged) and the run fails. A detached table left by a run that
 * died is finished first, so a crash between the steps loses nothing and is completed next time.
 * `onArchived` hears of each month once it is dropped, so a run that fails later still counts it.
 *
 * With `environment` (the daemon's PROVIDER_ENV), a month that also holds the other environment's
 * deliveries (two daemons on one ledger: CONTRACT.md) is not this daemon's to drop, whatever the
 * other's retention: its own rows of the month are exported as above to
 * `<archiveDir>/<partition>.<environment>.copy.gz` (the manifest names the environment) and then
 * deleted, in one transaction that checks it deletes as many rows as the file holds; the month
 * stays, and is dropped whole by the run that finds only its own environment's rows in it.
 *
 * `signal` (the partition job's stop) stops it before and during each detach and each archive: an
 * archive in progress is cut short (partition-archive.ts: no archive file is left, the month stays
 * detached for the next run, as after a crash). A month whose archive is whole is dropped whatever
 * the signal: a stop there would only have the next run archive it a second time.
 */
export async function retirePartitions(
  sql: Sql,
  now: Date,
  retentionMonths: number | undefined,
  archiveDir: string,
  log: Logger,
  onArchived?: (archived: ArchivedPartition) => void,
  fence: Fence = unfenced,
  signal?: AbortSignal,
  environment?: ProviderEnvironment,
): Promise<ArchivedPartition[]> {
  const shared: string[] = [];
  for (const name of retentionMonths === undefined ? [] : await attachedPartitions(sql)) {
    const month = monthOfPartition(name);
    if (!month || !isRetired(month, now, retentionMonths)) continue;
    signal?.throwIfAborted();
    if (environment !== undefined) {
      const [other] = await sql<{ held: boolean }[]>`select exists (select 1 from ${sql(name)} where environment <> ${environment}) as held`;
      if (other?.held) {
        shared.push(name);
        continue;
      }
    }
    try {
      await stoppable(sql, signal, async (tx) => {
        await fence(tx);
        await tx.unsafe(`set local lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
        await tx.unsafe(`alter table webhook_deliveries detach partition "${name}"`);
        await fence(tx);
      });
    } catch (error) {
      // Detached (or archived and dropped) by another run since the listing: done already.
      if ((await attachedPartitions(sql)).includes(name)) throw error;
      continue;
    }
    log.info({ partition: name }, 'delivery partition past DELIVERY_RETENTION_MONTHS detached');
  }
  const detached = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and not c.relispartition
      and c.relname like ${`${PARTITION_PREFIX.replaceAll('_', '\\_')}%`}
    order by c.relname`;
  const archived: ArchivedPartition[] = [];
  for (const { name } of detached) {
    const month = monthOfPartition(name);
    if (!month) continue;
    // Checked before the archive too, so a run that lost its lock does not write a second file of a
    // month the holder archives.
    await fence(sql);
    signal?.throwIfAborted();
    let done: ArchivedPartition;
    try {
      done = await archivePartition(sql, name, month, archiveDir, signal);
    } catch (error) {
      // Archived and dropped by another run meanwhile: nothing left to do.
      if (errorCode(error) === UNDEFINED_TABLE && !signal?.aborted) continue;
      throw error;
    }
    await transaction(sql, async (tx) => {
      await fence(tx);
      await tx`drop table if exists ${tx(name)}`;
    });
    archived.push(done);
    onArchived?.(done);
    log.info({ partition: name, rows: done.rows, file: done.file }, 'delivery partition archived and dropped');
  }
  for (const name of shared) {
    const month = monthOfPartition(name)!;
    await fence(sql);
    signal?.throwIfAborted();
    const [own] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(name)} where environment = ${environment!}`;
    if (!own || own.n === 0) continue;
    let done: ArchivedPartition;
    try {
      done = await archivePartition(sql, name, month, archiveDir, signal, {
        environment: environment!,
        remove: async (tx, rows) => {
          await fence(tx);
          const deleted = await tx`delete from ${tx(name)} where environment = ${environment!}`;
          if (deleted.count !== rows) throw new Error(`archive of ${name}'s ${environment!} deliveries holds ${rows} rows, the month ${deleted.count}: none deleted`);
          await fence(tx);
        },
      });
    } catch (error) {
      // A delivery of the month changed since the export (a reparse): nothing was deleted and the
      // archive was removed; the next run exports the month's rows as they are then.
      if (errorCode(error) !== SERIALIZATION_FAILURE || signal?.aborted) throw error;
      log.warn({ partition: name, environment }, 'delivery partition shared with the other environment: a delivery changed while its rows were archived; nothing deleted, retried next run');
      continue;
    }
    archived.push(done);
    onArchived?.(done);
    log.info({ partition: name, environment, rows: done.rows, file: done.file }, 'delivery partition shared with the other environment: this environment\'s deliveries archived and deleted, the month kept');
  }
  return archived;
}

export interface PartitionState {
  /** Months after the current one with partitions, without a gap (partition-months.ts monthsCoveredAhead). */
  ahead: number;
  /** Deliveries in the default partition. */
  defaultRows: number;
}

/**
 * What the partitions look like now, for the maintenance gauges (metrics.ts). Read after a run,
 * the default partition holds only deliveries whose month the run could not create or fill.
 */
export async function partitionState(sql: Sql, now: Date): Promise<PartitionState> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(DEFAULT_PARTITION)}`;
  return { ahead: monthsCoveredAhead(now, await attachedPartitions(sql)), defaultRows: row?.n ?? 0 };
}

const DUPLICATE_TABLE = '42P07';
const UNIQUE_VIOLATION = '23505';
const UNDEFINED_TABLE = '42P01';
const SERIALIZATION_FAILURE = '40001';

/** CREATE TABLE of a name another transaction created: 42P07, or 23505 on pg_type's name index when the two overlapped. */
/**
 * Attaches `name` as the partition of [from, to), first moving that month's rows out of the default
 * partition (attaching fails while the default holds any row of the new bounds).
 */
async function attachMonth(tx: TransactionSql, name: string, from: string, to: string): Promise<void> {
  await tx`
    with moved as (
      delete from ${tx(DEFAULT_PARTITION)} where received_at >= ${from}::timestamptz and received_at < ${to}::timestamptz returning *
    )
    insert into ${tx(name)} select * from moved`;
  await tx.unsafe(`alter table webhook_deliveries attach partition "${name}" for values from ('${from}') to ('${to}')`);
}

function isDuplicateTable(error: unknown): boolean {
  const code = errorCode(error);
  return code === DUPLICATE_TABLE || (code === UNIQUE_VIOLATION && (error as { constraint_name?: string }).constraint_name === 'pg_type_typname_nsp_index');
}
