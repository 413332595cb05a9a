import type { Writable } from 'node:stream';
import { csvHeader, DEFAULT_CSV, renderBatch, type Cell, type CsvOptions, type ReportFormat, type ReportShape } from './format.js';

export interface StreamResult {
  rows: number;
  /** The destination closed before the end (an HTTP client went away): the query was abandoned. */
  aborted: boolean;
}

/** How a destination that stops taking bytes is given up on (an HTTP client that stopped reading). */
export interface StallLimit {
  /** The destination is destroyed when its buffered bytes did not go down for this long. */
  stallMs: number;
  /** Called once, before the destination is destroyed: for a log line. */
  onStall?: () => void;
}

/**
 * Resolves when the destination can take more, or false when it closed or failed first, or (with
 * `stall`) took no byte for stall.stallMs, when it is destroyed. Progress, not the drain itself, is
 * timed: a slow reader takes a large batch over many seconds but takes some of it all along.
 */
function drained(out: Writable, stall?: StallLimit): Promise<boolean> {
  return new Promise((resolve) => {
    let waiting = out.writableLength;
    const check = stall
      ? setInterval(() => {
          if (out.writableLength < waiting) {
            waiting = out.writableLength;
            return;
          }
          stall.onStall?.();
          out.destroy();
          onClose();
        }, stall.stallMs)
      : undefined;
    const done = (ok: boolean) => () => {
      clearInterval(check);
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

async function write(out: Writable, chunk: string, stall?: StallLimit): Promise<boolean> {
  if (out.destroyed || out.writableEnded) return false;
  if (out.write(chunk)) return true;
  return drained(out, stall);
}

/**
 * Copies a cursor's batches to a writable in the report format, honouring backpressure, so memory
 * holds one batch (the cursor's size) whatever the report's length. Does not end the writable: the
 * caller owns it (process.stdout must stay open; an HTTP handler ends its response). Breaking out
 * of the loop closes the cursor (postgres.js), which stops the query when the client goes away;
 * with `stall`, also when it stops reading (the destination is destroyed then).
 */
export async function streamReport(
  batches: AsyncIterable<readonly Record<string, Cell>[]>,
  shape: ReportShape | readonly string[],
  format: ReportFormat,
  out: Writable,
  csv: CsvOptions = DEFAULT_CSV,
  stall?: StallLimit,
): Promise<StreamResult> {
  const resolved: ReportShape = 'columns' in shape ? shape : { columns: shape };
  let rows = 0;
  // Iterated by hand so that leaving early, even before the first batch, closes the cursor.
  const iterator = batches[Symbol.asyncIterator]();
  let finished = false;
  try {
    if (!(await write(out, format === 'csv' ? csvHeader(resolved, csv) : '[', stall))) return { rows, aborted: true };
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const batch = next.value;
      if (batch.length === 0) continue;
      if (!(await write(out, renderBatch(format, resolved, batch, rows === 0, csv), stall))) return { rows, aborted: true };
      rows += batch.length;
    }
    finished = true;
  } finally {
    if (!finished) await iterator.return?.();
  }
  if (format === 'json' && !(await write(out, rows === 0 ? ']\n' : '\n]\n', stall))) return { rows, aborted: true };
  return { rows, aborted: false };
}
