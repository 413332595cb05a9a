import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Sql, TransactionSql } from 'postgres';

/**
 * Rows sent with COPY FROM STDIN in its text format: the cheapest way to store many rows. 100,000
 * statement lines went into statement_lines in 2.36-2.48 s by COPY against 3.19-3.66 s from
 * unnest() over one text array per column and 3.43-3.71 s from a jsonb document (three alternating
 * rounds each, bench/README.md, statements): Postgres parses each field once, with no expression
 * per column.
 */

export type CopyValue = string | number | bigint | boolean | null;

// The text format's escapes (PostgreSQL documentation, COPY, "Text Format"): a backslash, and the
// characters that end a field or a row. NULL is \N; anything else goes as it is.
const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One field as COPY's text format writes it. */
export function copyField(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'string') return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value;
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return String(value);
}

/** One row, its fields in the order of the COPY's column list, ended by a line feed. */
export function copyRow(values: readonly CopyValue[]): string {
  let row = copyField(values[0] ?? null);
  for (let i = 1; i < values.length; i += 1) row += `\t${copyField(values[i]!)}`;
  return `${row}\n`;
}

/** Rows as the chunks copyRows sends: `rowsPerChunk` rows to a buffer. */
export function copyChunks<T>(items: readonly T[], row: (item: T) => string, rowsPerChunk = 1000): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < items.length; i += rowsPerChunk) {
    let text = '';
    const end = Math.min(items.length, i + rowsPerChunk);
    for (let j = i; j < end; j += 1) text += row(items[j]!);
    chunks.push(Buffer.from(text, 'utf8'));
  }
  return chunks;
}

/**
 * Copies `chunks` (copyChunks) into `table`'s `columns`, and resolves once Postgres has stored every
 * row; rejects with Postgres's own error (a unique violation, a field its type refuses, a full disk)
 * otherwise. Nothing else may use the connection meanwhile (postgres.js refuses a query during a
 * COPY).
 *
 * postgres.js 3.4.9 resolves a COPY query with its stream, and when Postgres refuses the rows after
 * the stream has ended, it hands the error to that already settled query and never finishes the
 * stream: awaiting it would hang, and the error would be lost (test/db/copy.test.ts). So the
 * query's rejection is taken here as it is handed over.
 */
export async function copyRows(sql: Sql | TransactionSql, table: string, columns: readonly string[], chunks: Iterable<Buffer>): Promise<void> {
  const query = sql`copy ${sql(table)} (${sql(columns as string[])}) from stdin`;
  const failed = new Promise<never>((_, reject) => {
    const settable = query as unknown as { reject: (error: unknown) => void };
    const rejectQuery = settable.reject;
    settable.reject = (error: unknown) => {
      reject(error);
      rejectQuery(error);
    };
  });
  // Raced below, and left unsettled when the COPY succeeds.
  failed.catch(() => undefined);
  const stream = await Promise.race([query.writable(), failed]);
  const done = finished(stream);
  done.catch(() => undefined);
  for (const chunk of chunks) {
    if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), done, failed]);
  }
  stream.end();
  await Promise.race([done, failed]);
}
