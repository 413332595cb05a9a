import { Worker, type WorkerOptions } from 'node:worker_threads';
import { linesFromText, type BuiltStatement, type FreshRows } from './staged-rows.js';
import { StatementFormatError, type ReaderOptions, type StatementLine, type StatementSection, type Totals } from './types.js';

/** What the reader thread (read-thread.ts) is started with. */
export interface ReadThreadData {
  encoding: string;
  readerOptions: ReaderOptions;
  sliceChars: number;
  environment: string;
  statementId: number;
  /** for refusals' messages */
  fileName: string;
  /** STATEMENT_MAX_AMOUNT_CENTS */
  maxAmountCents?: bigint;
}

/** A chunk of the file, or (no chunk) its end. */
export interface ReadThreadRequest {
  chunk?: Uint8Array;
}

/**
 * A statement, or a part of one, as the reader handed it over: a statement handed over whole comes
 * built (staged-rows.ts BuiltStatement) with its lines as text and `lines` empty; a part, as lines.
 */
export interface ReadThreadPart {
  section: StatementSection;
  lines: StatementLine[];
  more: boolean;
  /** `linesText`: staged-rows.ts linesToText, UTF-8 */
  built?: { fresh: FreshRows; count: number; totals: Totals; linesText: Uint8Array };
}

/** The parts a chunk completed, then the error that refused the rest, if one did. */
export interface ReadThreadReply {
  parts: ReadThreadPart[];
  error?: { name: string; message: string };
}

/** A part as the import stages it. */
export interface ReadPart {
  section: StatementSection;
  lines: StatementLine[];
  more: boolean;
  built?: BuiltStatement;
}

/** What one read of the thread gave: the parts a chunk completed, then the refusal of the rest, if any. */
export interface ThreadRead {
  parts: ReadPart[];
  error?: Error;
}

/**
 * Compiled (dist/) the thread is .js. Under the TypeScript sources (tests, tsx) it is loaded through
 * tsx's API: Node 20 does not apply a loader given as the worker's `--import` to its entry module.
 */
function startThread(options: WorkerOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./read-thread.js', import.meta.url), options);
  const entry = new URL('./read-thread.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => tsx.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(import.meta.url)}))`;
  return new Worker(code, { ...options, eval: true });
}

/** The error the thread reported, as the main thread's reader would have thrown it. */
function rebuilt(error: { name: string; message: string }): Error {
  if (error.name === 'StatementFormatError') return new StatementFormatError(error.message);
  const e = new Error(error.message);
  e.name = error.name;
  return e;
}

// Buffers arrive as Uint8Arrays; db/copy.ts writes Buffers.
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function received(part: ReadThreadPart): ReadPart {
  const { section, lines, more, built } = part;
  if (!built) return { section, lines, more };
  const { fresh, count, totals, linesText } = built;
  return {
    section, lines, more,
    built: { fresh: { ...fresh, entries: fresh.entries.map(asBuffer), lines: fresh.lines.map(asBuffer) }, count, totals, lines: () => linesFromText(new TextDecoder().decode(linesText)) },
  };
}

/**
 * A file's reader in a thread of its own: the import's main thread sends it the file's chunks and
 * gets back the statements each completes, with their rows built (read-thread.ts). One request at a
 * time. `maxMemoryMb`: its heap limit (the inbox's import process gives it its own,
 * STATEMENT_IMPORT_MAX_MEMORY_MB: isolated-import.ts); a thread that reaches it fails the import,
 * saying so, and the process lives on.
 */
export class ReadThread {
  private readonly worker: Worker;
  private waiting: { resolve: (read: ThreadRead) => void; reject: (error: Error) => void } | null = null;
  private failure: Error | null = null;

  constructor(data: ReadThreadData, maxMemoryMb?: number) {
    this.worker = startThread({ workerData: data, ...(maxMemoryMb !== undefined ? { resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb } } : {}) });
    this.worker.on('message', (reply: ReadThreadReply) => {
      const waiting = this.waiting;
      this.waiting = null;
      waiting?.resolve({ parts: reply.parts.map(received), ...(reply.error ? { error: rebuilt(reply.error) } : {}) });
    });
    this.worker.on('error', (error: Error & { code?: string }) =>
      this.fail(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new Error(`the statement reader thread ran out of memory (heap limit ${maxMemoryMb === undefined ? "not set, V8's default" : `${maxMemoryMb} MB`})`)
          : error,
      ),
    );
    this.worker.on('exit', (code) => this.fail(new Error(`the statement reader thread exited with code ${code}`)));
    // A reply that cannot be deserialized (memory for its copy ran out) would otherwise leave the
    // read waiting forever, inside the import's transaction and holding its lock.
    this.worker.on('messageerror', (error) => this.fail(new Error(`the statement reader thread's reply could not be read: ${error.message}`)));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.waiting?.reject(this.failure);
    this.waiting = null;
  }

  /**
   * The statement parts `chunk` completes (null: the file ended), and the reader's error if it
   * refused what followed them; rejects only if the thread failed.
   */
  read(chunk: Uint8Array | null): Promise<ThreadRead> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.waiting) return Promise.reject(new Error('ReadThread.read called before the previous read settled'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      if (!chunk) {
        this.worker.postMessage({} satisfies ReadThreadRequest);
        return;
      }
      // A copy of exactly the chunk, handed over: a view's whole buffer would be cloned otherwise
      // (importStatement's chunks are views of the whole file).
      const copy = new Uint8Array(chunk);
      this.worker.postMessage({ chunk: copy } satisfies ReadThreadRequest, [copy.buffer]);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
