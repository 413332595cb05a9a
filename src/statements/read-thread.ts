/**
 * The reader thread of a large import (read-thread-client.ts starts it): decodes the file's bytes,
 * parses them with the format's reader and, for each statement handed over whole, builds its COPY
 * rows, checks its amounts against STATEMENT_MAX_AMOUNT_CENTS and counts its totals, so the
 * import's main thread only moves rows and Postgres's answers. Each message from the main thread is
 * a chunk of the file (or its end); the reply is every statement part that chunk completed, and
 * the error that refused what followed them, if any. The main thread sends the next chunk only
 * after the reply to the one before.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { refuseOutsideLimits } from './line-limits.js';
import { streamDecoder } from './decode.js';
import { freshRows, linesToText } from './staged-rows.js';
import { createTextFeed } from './text-feed.js';
import { addTotal } from './totals.js';
import type { StatementLine, StatementSection, Totals } from './types.js';
import type { ReadThreadData, ReadThreadPart, ReadThreadReply, ReadThreadRequest } from './read-thread-client.js';

const data = workerData as ReadThreadData;
const port = parentPort!;
const decoder = streamDecoder(data.encoding);
let parts: ReadThreadPart[] = [];
const encoder = new TextEncoder();
// As importSections decides it: a statement handed over in parts is staged part by part, from its
// lines, without rows built ahead; its parts go to the main thread as lines.
let inParts = false;
let statements = 0;
function handOver(section: StatementSection, lines: StatementLine[], more: boolean): void {
  const whole = !more && !inParts;
  inParts = more;
  const index = statements;
  if (!more) statements += 1;
  if (!whole) {
    parts.push({ section, lines, more });
    return;
  }
  refuseOutsideLimits(data.fileName, index, section, lines, data.maxAmountCents);
  const totals: Totals = new Map();
  for (const l of lines) addTotal(totals, l.currency, l.direction, l.amountCents);
  const fresh = freshRows(section, lines, data.environment, data.statementId);
  parts.push({ section, lines: [], more: false, built: { fresh, count: lines.length, totals, linesText: encoder.encode(linesToText(lines)) } });
}

// What the reader emitted while a slice was parsed is handed over once the slice parsed without
// error, as the main thread stages it (import.ts drains after each slice): so a file is refused
// with the same words on both threads (an amount over the limit and a format error later in the
// same slice: the format error on both).
let emitted: [StatementSection, StatementLine[], boolean][] = [];
function handOverEmitted(): void {
  const ready = emitted;
  emitted = [];
  for (const [section, lines, more] of ready) handOver(section, lines, more);
}
const feed = createTextFeed((section, lines, more) => emitted.push([section, lines, more === true]), data.readerOptions, data.sliceChars, handOverEmitted);

port.on('message', (request: ReadThreadRequest) => {
  const reply = (error?: unknown) => {
    const message: ReadThreadReply = { parts };
    if (error !== undefined) {
      const e = error instanceof Error ? error : new Error(String(error));
      message.error = { name: e.name, message: e.message };
    }
    // The rows' buffers and the lines' text are handed over, not copied: each holds its own memory
    // (Buffer.from of a string beyond the pool's size); one that shares the pool is copied. Off
    // the heap, the main thread frees them as soon as their small wrappers die young; as strings,
    // its heap grew by the lines of dozens of statements between collections (bench/README.md).
    const owned = parts
      .flatMap((p) => (p.built ? [...p.built.fresh.entries, ...p.built.fresh.lines, p.built.linesText] : []))
      .filter((b) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength);
    parts = [];
    port.postMessage(message, owned.map((b) => b.buffer as ArrayBuffer));
  };
  try {
    const text = request.chunk ? decoder.write(request.chunk) : decoder.end();
    // The statements the reader's end emitted (its last), as the main thread drains after its end.
    feed.write(text, !request.chunk).then(handOverEmitted).then(() => reply(), reply);
  } catch (error) {
    reply(error);
  }
});
