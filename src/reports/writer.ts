import type { Writable } from 'node:stream';
import { csvHeader, DEFAULT_CSV, renderBatch, type Cell, type CsvOptions, type ReportFormat, type ReportShape } from './format.js';

export interface StreamResult {
  rows: number;
  /** The destination closed before the end (an HTTP client went away): the query was abandoned. */
  aborted: boolean;
}

/** Resolves when the destination can take more, or false when it closed or failed first. */
function drained(out: Writable): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      out.off('drain', onDrain);
      out.off('close', onClose);
      out.off('error', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    out.on('drain', onDrain);
    out.on('close', onClose);
    out.on('error', onClose);
  });
}

async function write(out: Writable, chunk: string): Promise<boolean> {
  if (out.destroyed || out.writableEnded) return false;
  if (out.write(chunk)) return true;
  return drained(out);
}

/**
 * Copies a cursor's batches to a writable in the report format, honouring backpressure, so memory
 * holds one batch (the cursor's size) whatever the report's length. Does not end the writable: the
 * caller owns it (process.stdout must stay open; an HTTP handler ends its response). Breaking out
 * of the loop closes the cursor (postgres.js), which stops the query when the client goes away.
 */
export async function streamReport(
  batches: AsyncIterable<readonly Record<string, Cell>[]>,
  shape: ReportShape | readonly string[],
  format: ReportFormat,
  out: Writable,
  csv: CsvOptions = DEFAULT_CSV,
): Promise<StreamResult> {
  const resolved: ReportShape = 'columns' in shape ? shape : { columns: shape };
  let rows = 0;
  // Iterated by hand so that leaving early, even before the first batch, closes the cursor.
  const iterator = batches[Symbol.asyncIterator]();
  let finished = false;
  try {
    if (!(await write(out, format === 'csv' ? csvHeader(resolved, csv) : '['))) return { rows, aborted: true };
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const batch = next.value;
      if (batch.length === 0) continue;
      if (!(await write(out, renderBatch(format, resolved, batch, rows === 0, csv)))) return { rows, aborted: true };
      rows += batch.length;
    }
    finished = true;
  } finally {
    if (!finished) await iterator.return?.();
  }
  if (format === 'json' && !(await write(out, rows === 0 ? ']\n' : '\n]\n'))) return { rows, aborted: true };
  return { rows, aborted: false };
}
