import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { getTableConfig } from 'drizzle-orm/pg-core';
import type { Sql, TransactionSql } from 'postgres';
import { webhookDeliveries } from '../schema/deliveries.js';
import { transaction } from '../db/transaction.js';
import { cancelOnAbort } from '../db/cancel-on-abort.js';
import { addMonths } from './partition-months.js';
import { environmentSchema, type ProviderEnvironment } from '../config/schema.js';

/**
 * The columns of an archive, in order: every column of webhook_deliveries, read from the drizzle
 * schema so a column added later is archived too. A restore names them
 * (`\copy webhook_deliveries (…) from …`), and each manifest lists them.
 */
export const ARCHIVE_COLUMNS: readonly string[] = getTableConfig(webhookDeliveries).columns.map((c) => c.name);

export interface ArchivedPartition {
  table: string;
  rows: number;
  file: string;
  /** Set when only this environment's rows of a month both environments share were archived. */
  environment?: ProviderEnvironment;
}

/**
 * Exports the detached month `table` to `<archiveDir>/<table>.copy.gz` (Postgres COPY text format,
 * gzip; the columns in ARCHIVE_COLUMNS order) with a `.json` manifest beside it (bounds, columns,
 * row count, sha256), each written as `.part`, fsync'd and renamed into place: a file without
 * `.part` is whole. The rows written are counted and must equal the table's count.
 *
 * `signal` (the partition job's stop) cuts the export short: its COPY is cancelled, the rest of its
 * output discarded and the `.part` removed, and it fails with the signal's reason; the table stays
 * (detached) for the next run. The COPY of a month takes as long as the month is big and the disk
 * slow, with nothing bounding it by SHUTDOWN_TIMEOUT_MS (test/ledger/partition-stop.test.ts
 * stops one that would take ~10 s within 2 s). Once the data file is whole the
 * few steps left (its rename, the manifest) are finished whatever the signal, so no archive is left
 * without its manifest.
 */
export async function archivePartition(sql: Sql, table: string, month: Date, archiveDir: string, signal?: AbortSignal, only?: EnvironmentRows): Promise<ArchivedPartition> {
  await mkdir(archiveDir, { recursive: true });
  // With `only`, that environment's rows alone, in a file named after it (partitions.ts
  // retirePartitions: a month both environments share).
  const environment = only?.environment;
  const base = environment === undefined ? table : `${table}.${environment}`;
  // A month archived before (its partition re-created for a late delivery) keeps its file.
  const taken = await stat(join(archiveDir, `${base}.copy.gz`)).then(() => true, () => false);
  const file = join(archiveDir, taken ? `${base}.${Date.now()}.copy.gz` : `${base}.copy.gz`);
  const seal = async ({ rows, expected, sha256 }: { rows: number; expected: number; sha256: string }) => {
    if (rows !== expected) throw new Error(`archive of ${table} holds ${rows} rows, the table ${expected}: the table is kept${environment === undefined ? ' (detached)' : ''}`);
    await durable(`${file}.part`, file);
    const manifest = {
      table,
      ...(environment === undefined ? {} : { environment }),
      from: month.toISOString(),
      to: addMonths(month, 1).toISOString(),
      format: 'postgres COPY text, gzip',
      columns: ARCHIVE_COLUMNS,
      rows,
      sha256,
    };
    await writeFile(`${file}.json.part`, `${JSON.stringify(manifest, null, 2)}\n`);
    await durable(`${file}.json.part`, `${file}.json`);
    await fsyncPath(archiveDir);
  };
  // With `only`, the rows are removed in the export's own transaction once the archive is whole, so
  // what is deleted is what the file holds (repeatable read: a row changed since the export, a
  // reparse's update, fails the delete and nothing is deleted). A failure before the delete took
  // effect takes the archive with it; one at the commit keeps it, since the rows may be gone.
  let sealed = false;
  let removed = false;
  try {
    const copied = await exportRows(sql, table, `${file}.part`, signal, only && {
      environment: only.environment,
      finish: async (tx, rows) => {
        await seal(rows);
        sealed = true;
        await only.remove(tx, rows.rows);
        removed = true;
      },
    });
    if (!only) await seal(copied);
    return { table, rows: copied.rows, file, ...(environment === undefined ? {} : { environment }) };
  } catch (error) {
    await rm(`${file}.part`, { force: true });
    if (sealed && !removed) await Promise.all([rm(file, { force: true }), rm(`${file}.json`, { force: true })]);
    throw error;
  }
}

/** One environment's rows of a month, removed in the transaction that exported them. */
export interface EnvironmentRows {
  environment: ProviderEnvironment;
  /** Deletes the exported rows in `tx`, refusing (throwing) unless it deletes `rows` of them. */
  remove: (tx: TransactionSql, rows: number) => Promise<void>;
}

/**
 * The table's rows written to `part` through gzip, counted and hashed, in one transaction (so a
 * cancel on abort reaches only this COPY: db/cancel-on-abort.ts). postgres.js's COPY stream is never
 * destroyed while its COPY runs: it has no destroy of its own, and its socket stays paused once
 * the stream stops reading, so that connection would never answer again (postgres 3.4.9
 * connection.js CopyData; resumeConnection). When the file side fails or the signal aborts, the
 * COPY is cancelled and its remaining output read and dropped until the server's end or error.
 */
async function exportRows(
  sql: Sql,
  table: string,
  part: string,
  signal?: AbortSignal,
  only?: { environment: ProviderEnvironment; finish: (tx: TransactionSql, copied: { rows: number; expected: number; sha256: string }) => Promise<void> },
): Promise<{ rows: number; expected: number; sha256: string }> {
  // COPY takes no parameters: the environment is one of the enum's values, written as a literal.
  if (only !== undefined && !environmentSchema.options.includes(only.environment)) throw new Error(`not an environment: ${String(only.environment)}`);
  const where = only === undefined ? '' : ` where environment = '${only.environment}'`;
  try {
    return await transaction(sql, async (tx) => {
      // One snapshot for the count, the export and the delete (archivePartition).
      if (only !== undefined) await tx`set transaction isolation level repeatable read`;
      const giveUp = new AbortController();
      const unwatch = await cancelOnAbort(sql, tx, signal ? AbortSignal.any([signal, giveUp.signal]) : giveUp.signal);
      try {
        const [count] = await tx.unsafe<{ n: string }[]>(`select count(*)::text as n from "${table}"${where}`);
        const copied = await copyOut(await tx.unsafe(`copy (select ${ARCHIVE_COLUMNS.join(', ')} from "${table}"${where} order by id) to stdout`).readable(), part, giveUp, signal);
        const result = { ...copied, expected: Number(count?.n ?? 0) };
        if (only !== undefined) await only.finish(tx, result);
        return result;
      } finally {
        await unwatch();
      }
    });
  } catch (error) {
    // Whatever the cut-short COPY failed with (57014, the file stream destroyed): the stop is the reason.
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
}

/**
 * `source` (a COPY's output) through gzip into `part`, its lines counted and its gzip hashed.
 * `giveUp` aborts, which cancels the COPY, when the file side fails or `signal` aborts; the file
 * side is then given up (destroyed once its write in flight returns) and the source drained.
 */
async function copyOut(source: Readable, part: string, giveUp: AbortController, signal?: AbortSignal): Promise<{ rows: number; sha256: string }> {
  const read = finished(source, { writable: false });
  // COPY text format escapes newlines inside values, so every row is exactly one line.
  let rows = 0;
  const countLines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows += 1;
      done(null, chunk);
    },
  });
  const hash = createHash('sha256');
  const hashed = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const head = new PassThrough();
  const drop = (reason: unknown) => {
    giveUp.abort(reason);
    source.unpipe(head);
    source.resume();
  };
  const written = pipeline(head, countLines, createGzip(), hashed, createWriteStream(part)).catch((error: unknown) => {
    drop(error);
    throw error;
  });
  // pipe, not pipeline: a failing file side unpipes the source instead of destroying it.
  source.pipe(head);
  source.once('error', (error) => head.destroy(error));
  const onAbort = () => head.destroy(signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason)));
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  try {
    const [wrote, readAll] = await Promise.allSettled([written, read]);
    resumeConnection(source);
    if (wrote.status === 'rejected') throw wrote.reason;
    if (readAll.status === 'rejected') throw readAll.reason;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return { rows, sha256: hash.digest('hex') };
}

/**
 * Lets the connection read again once its COPY stream has ended. postgres.js 3.4.9 pauses the
 * connection's socket when a CopyData finds the stream's buffer full, and resumes it only from the
 * stream's `_read`, which Node no longer calls once the stream has ended: when the last CopyData
 * filled the buffer (a file side slower than the server, or the source unpiped on a stop), the
 * CopyDone or error behind it is handled but the ReadyForQuery after it is never read, and the
 * connection answers nothing again. Measured: a 6.3 MB COPY piped into a writer taking 2 ms per
 * 16 KB left the next query on its connection unanswered 3 times out of 3, answered in 2 ms with
 * this; here the transaction's COMMIT or ROLLBACK would wait forever
 * (test/ledger/partition-stop.test.ts). Its `_read` only resumes the socket.
 */
function resumeConnection(source: Readable): void {
  (source as Readable & { _read(size: number): void })._read(0);
}

/** fsync the written file, then rename it into place: a crash leaves a `.part` or the whole file. */
async function durable(part: string, final: string): Promise<void> {
  await fsyncPath(part);
  await rename(part, final);
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
