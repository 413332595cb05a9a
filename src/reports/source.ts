import type { Writable } from 'node:stream';
import type { PendingQuery, Row, Sql } from 'postgres';
import { UsageError } from '../config/usage-error.js';
import type { Cell, CsvOptions, ReportFormat, ReportShape } from './format.js';
import { streamReport, type StreamResult } from './writer.js';
import { SQL_ISO_SECONDS } from '../db/time-format.js';

export type ReportRow = Record<string, Cell>;

/**
 * A report as the command line and the API both read it: its columns, the column its rows are
 * ordered by (unique, so a cursor after a key is exact), and the query of the rows after a key.
 */
export interface ReportSource {
  /** The client the query runs on (the end-of-report marker is added around it, openBatches). */
  sql: Sql;
  shape: ReportShape;
  key: string;
  /** Rows with key > after (all when unset), in key order, at most `limit` when given. */
  query(after: string | undefined, limit: number | undefined): PendingQuery<ReportRow[]>;
  /** Per-row fix-ups after the database (e.g. ids as JSON numbers). */
  map?: (row: ReportRow) => void;
}

/** ISO 8601 UTC to the second: what spreadsheets parse, without the microseconds Postgres keeps. */
export const REPORT_TIME_FORMAT = SQL_ISO_SECONDS;

/**
 * Integer cents as the decimal amount's text (`12050` is `120.50`, `-5` is `-0.05`, null stays
 * null), exact however many digits: a numeric times 0.01 keeps every digit at the scale of 0.01,
 * where `cents::numeric / 100` keeps only the 16 significant digits Postgres gives a quotient
 * (9223372036854775807 cents came out as 92233720368547758.00). Every report and page amount is
 * written with it, so none disagrees with its cents.
 */
export function decimalAmount(sql: Sql, cents: PendingQuery<Row[]>): PendingQuery<Row[]> {
  return sql`((${cents})::numeric * 0.01)::text`;
}

// A cursor is the last key of a page, base64url-wrapped so clients treat it as opaque.
export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, valid: RegExp): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!valid.test(key)) throw new UsageError(`cursor '${cursor}' is not one this report gave`);
  return key;
}

const END = '__end_of_report';

/**
 * The report's rows, then one row of NULLs marked as its end, in one statement. postgres.js can end
 * a cursor without an error when the server ends the session mid-report (pg_terminate_backend; seen
 * in test/http/report-outage.test.ts on Node 24, one run in three): without the marker, the rows
 * read so far would be written out as the whole report. No marker, no complete report.
 */
function withEndMarker(source: ReportSource, after: string | undefined) {
  const { sql } = source;
  return sql<ReportRow[]>`
    select r.*, false as ${sql(END)} from (${source.query(after, undefined)}) r
    union all
    select r.*, true from (select 1) one left join (${source.query(after, 0)}) r on false`;
}

async function* mapped(source: ReportSource, batches: AsyncIterable<ReportRow[]>): AsyncGenerator<ReportRow[]> {
  let ended = false;
  for await (const batch of batches) {
    if (ended) throw new Error('the report had rows after its end marker');
    const rows: ReportRow[] = [];
    for (const row of batch) {
      if ((row as Record<string, unknown>)[END] === true) {
        ended = true;
        continue;
      }
      delete row[END];
      rows.push(row);
    }
    if (source.map) rows.forEach(source.map);
    if (rows.length > 0) yield rows;
  }
  if (!ended) throw new Error('the report was cut short: the database connection ended before its last row');
}

/**
 * Starts the report's query (from `after`, a cursor of 1,000 rows: constant memory) and waits for
 * its first batch, so a ledger that cannot be read fails here, before a header or a byte is
 * written: an HTTP client then gets 503, not a 200 with an empty report. The batches that follow
 * replay that first one; return() closes the cursor even if iteration never began.
 */
export async function openBatches(source: ReportSource, after?: string): Promise<AsyncIterableIterator<ReportRow[]>> {
  const inner = mapped(source, withEndMarker(source, after).cursor(1000));
  let first: IteratorResult<ReportRow[]> | undefined = await inner.next();
  const replaying: AsyncIterableIterator<ReportRow[]> = {
    [Symbol.asyncIterator]: () => replaying,
    next() {
      const replay = first;
      first = undefined;
      return replay ? Promise.resolve(replay) : inner.next();
    },
    async return() {
      first = undefined;
      await inner.return(undefined);
      return { done: true, value: undefined };
    },
  };
  return replaying;
}

/** The whole report (from `after`), streamed in constant memory; fails before writing if the ledger cannot be read. */
export async function streamSource(source: ReportSource, format: ReportFormat, out: Writable, csv?: CsvOptions, after?: string): Promise<StreamResult> {
  return streamReport(await openBatches(source, after), source.shape, format, out, csv);
}

/** One page of at most `limit` rows, and the cursor of the next when there are more. */
export async function fetchPage(source: ReportSource, after: string | undefined, limit: number): Promise<{ rows: ReportRow[]; next?: string }> {
  const rows = [...(await source.query(after, limit + 1))];
  const more = rows.length > limit;
  if (more) rows.length = limit;
  if (source.map) rows.forEach(source.map);
  const last = rows[rows.length - 1];
  return more && last ? { rows, next: encodeCursor(String(last[source.key])) } : { rows };
}

/** Every row of a bounded report in memory (XLSX, built whole), or undefined past `max`. */
export async function fetchAll(source: ReportSource, after: string | undefined, max: number): Promise<ReportRow[] | undefined> {
  const page = await fetchPage(source, after, max);
  return page.next === undefined ? page.rows : undefined;
}
