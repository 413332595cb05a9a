import { fork } from 'node:child_process';
import { setPriority } from 'node:os';
import type { ProviderEnvironment } from '../config/schema.js';
import { FileChangedError, type ImportResult, type LockWaitState } from './import.js';
import type { CsvOptions } from './csv.js';
import { StatementFormatError } from './types.js';

export interface ChildRequest {
  databaseUrl: string;
  environment: ProviderEnvironment;
  file: string;
  name: string;
  maxFileBytes: number;
  /** decimal text: bigint does not cross the IPC channel */
  maxAmountCents: string;
  /** the user's CSV profile and the accounts' currencies (plain data: it crosses the IPC channel) */
  csv?: CsvOptions;
  acceptUnbalanced: boolean;
  /** the child's heap limit, set by importInChildProcess from its options: its reader thread's too (read-thread-client.ts) */
  maxMemoryMb?: number;
  /** the daemon's receiver runs beside it: the child stores at a pace the receiver's commits tolerate, told their time by `pressureMs` */
  yieldToReceiver?: boolean;
}

/** What the parent sends the child while it imports: the receiver's commit pressure (store-pipeline.ts YieldTo). */
export interface PressureMessage {
  pressureMs: number;
}

/** What the child sends while it imports beside the receiver: the time it has given way to it so far. */
export interface GaveWayMessage {
  gaveWayMs: number;
}

/**
 * What the child sends when it starts waiting for the environment's import lock and when it holds
 * it: another import (a second replica's, an upload) may hold it for longer than this one may work,
 * so the time limit does not count the wait.
 */
export interface LockWaitMessage {
  lockWait: LockWaitState;
}

/** The import process's connection's application_name: how the server's view of it is found. */
export const IMPORT_APPLICATION_NAME = 'bnpl-recon statement import';

/** What the child sends once connected: its Postgres backend, so a time limit can ask the server what it was doing. */
export interface BackendMessage {
  backendPid: number;
}

/** `peakRssMb`: the import process's peak resident memory (process.resourceUsage().maxRSS), for the log and tests. */
/** `refused`: the file's own fault (a StatementFormatError), rebuilt as one here, so a caller can tell a refusal from a failure. */
export type ChildReply = ({ ok: true; result: ImportResult } | { ok: false; message: string; code: string | undefined; changed: boolean; refused?: boolean }) & { peakRssMb?: number };

/** The import process died (out of memory, a crash) or ran past its time: the file is at fault, not the database. */
export class ImportCrashedError extends Error {
  override readonly name = 'ImportCrashedError';
}

/**
 * The import ran past its time waiting on the ledger, not on its own work (daemon-import.ts
 * ledgerHeldImport said why: a lock another session holds, its connection gone, the ledger not
 * answering), or its process had not even connected to the ledger by then: the file is not at
 * fault, and is imported again later.
 */
export class ImportLedgerStalledError extends Error {
  override readonly name = 'ImportLedgerStalledError';
  /** the import's commit reached the server and its answer was lost: the file may be stored */
  readonly mayBeStored: boolean;
  constructor(message: string, options: { mayBeStored?: boolean } = {}) {
    super(message);
    this.mayBeStored = options.mayBeStored ?? false;
  }
}

/** The daemon is stopping: the import was stopped and its transaction rolled back; the file stays for the next start. */
export class ImportStoppedError extends Error {
  override readonly name = 'ImportStoppedError';
}

/** Why the ledger held an import past its time (daemon-import.ts ledgerHeldImport). */
export interface LedgerHeld {
  reason: string;
  /** its commit reached the server: the statement may be stored though the import never heard */
  mayBeStored?: boolean;
}

export interface IsolatedImportOptions {
  /** --max-old-space-size of the import process */
  maxMemoryMb: number;
  /**
   * How long the import may work: the time its process takes to start and connect to the ledger
   * does not count (bounded by startLimitMs instead), nor the time it gives way to the receiver
   * (GaveWayMessage). Beside a busy receiver that is most of an import's time (a CAMT.053 of 100,000 entries
   * beside deliveries at 500/s: 104-145 s giving way, 11-16 s not, bench/README.md import-ingest),
   * and the pace bounds it: at most 2 s before a statement and 15 times its storing time after it
   * (store-pipeline.ts RECEIVER_PACE).
   */
  timeoutMs: number;
  /** how long the process may take to start and connect; IMPORT_START_LIMIT_MS, or timeoutMs when longer, unless set */
  startLimitMs?: number;
  signal?: AbortSignal;
  /** the receiver's commit pressure (webhooks/create-receiver.ts), relayed to the child every PRESSURE_RELAY_MS */
  pressureMs?: () => number;
  /** the child's scheduling priority (os.setPriority: -20 highest, 19 lowest); unset, the daemon's */
  niceness?: number;
  /**
   * Asked when the time limit runs out, with the child's backend pid: why the ledger, not the
   * import's own work, held the import, else undefined. Unset, the file is blamed.
   */
  ledgerHeld?: (backendPid: number) => Promise<LedgerHeld | undefined>;
}

/**
 * How long an import process may take to start and connect to the ledger before it is stopped with
 * ImportLedgerStalledError (the file stays for the next scan). Under the TypeScript loader the start
 * takes about 1 s on an idle 2-core machine and several seconds under load; compiled, a fraction of
 * that. Not counted against the import's own limit, which a start under load overran (a 2 s limit:
 * a good file moved to failed/ before its process had opened it).
 */
const IMPORT_START_LIMIT_MS = 30_000;

// The receiver's pressure covers its last 500 ms of commits; relayed a tenth of that apart.
const PRESSURE_RELAY_MS = 50;

// Compiled (dist/) the child is .js; under the TypeScript sources (tests, tsx) it needs tsx's loader.
const CHILD = new URL(import.meta.url.endsWith('.ts') ? './import-child.ts' : './import-child.js', import.meta.url);
const LOADER = import.meta.url.endsWith('.ts') ? ['--import', 'tsx'] : [];

/**
 * What of the daemon's environment the import process gets: the database address travels on the
 * IPC channel, so nothing of bnpl-recon's settings (the API key, tokens, the signing secret) is
 * passed; only what a Postgres connection and Node itself may read: libpq's PG* defaults (a
 * DATABASE_URL without a password takes PGPASSWORD), the CA settings for TLS, time zone,
 * locale, temporary directory and PATH. NODE_OPTIONS is left out too: the child's heap limit is its
 * own (--max-old-space-size), not the daemon's.
 */
export function importChildEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && CHILD_ENVIRONMENT.test(name)) kept[name] = value;
  }
  return kept;
}

const CHILD_ENVIRONMENT = /^(PG[A-Z_]+|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|TZ|LANG|LC_[A-Z_]+|TMPDIR|PATH|HOME)$/;

/**
 * Sets a process's niceness. Raising one's own child's needs no privilege on Linux; where it is
 * refused anyway (another platform's rules, a sandbox forbidding setpriority), the import runs at
 * the daemon's priority, as it did before there was one, and that is said once.
 */
function lowerPriority(pid: number, niceness: number): void {
  try {
    setPriority(pid, niceness);
  } catch (error) {
    if (!priorityRefusalSaid) process.emitWarning(`statement import: could not lower the import process's priority (${(error as Error).message}); it runs at the daemon's`);
    priorityRefusalSaid = true;
  }
}

let priorityRefusalSaid = false;

/**
 * Imports one statement file in a child process with its own heap limit: a 500,000-entry CAMT
 * parsed in the daemon's process took it to 4.2 GB and blocked webhook answers for 70 s; one of
 * 1,000,000 entries killed it, and again at each restart. In a child the parse neither shares the
 * receiver's event loop nor its heap, and a file that kills the child (or runs past `timeoutMs`)
 * fails with ImportCrashedError, which the inbox treats like any bad file: moved to failed/. The
 * child's transaction dies with its connection, so a killed import leaves nothing half-written.
 * Errors come back as messages; a database error keeps its code, so the caller still tells an
 * outage (retry later) from a bad file, and a refusal of the file comes back a StatementFormatError.
 */
export function importInChildProcess(request: ChildRequest, options: IsolatedImportOptions): Promise<ImportResult> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [], {
      execArgv: [...LOADER, `--max-old-space-size=${options.maxMemoryMb}`],
      env: importChildEnvironment(process.env),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    if (options.niceness !== undefined && child.pid !== undefined) lowerPriority(child.pid, options.niceness);
    let reply: ChildReply | undefined;
    let stderr = '';
    let why: Error | undefined;
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    const kill = (error: Error) => {
      // Once the child has answered, its import has committed or rolled back and only its
      // connection's close is left: a time limit or a shutdown that comes now still ends the
      // process (a close a stalled network holds up must not hold the inbox), but must not turn a
      // stored file into a failed one: the answer stands.
      if (!reply) why ??= error;
      child.kill('SIGKILL');
    };
    const started = performance.now();
    let gaveWayMs = 0;
    let lockWaitMs = 0;
    let lockWaitSince: number | undefined;
    const waitedForLock = () => lockWaitMs + (lockWaitSince === undefined ? 0 : performance.now() - lockWaitSince);
    const checkTime = () => {
      const elapsed = performance.now() - started;
      if (connected === undefined) {
        // Until the child has named its backend it has not opened the file: a start or a connection
        // that takes this long (a loaded machine loading the child's modules, a ledger that takes
        // the connection and never answers) is no fault of the file, which is imported again later.
        if (elapsed < startLimitMs) return void (timer = setTimeout(checkTime, startLimitMs - elapsed));
        return kill(new ImportLedgerStalledError(`import process did not start and connect to the ledger within ${startLimitMs} ms: stopped`));
      }
      const left = options.timeoutMs + connected.afterMs + gaveWayMs + waitedForLock() - elapsed;
      if (left > 0) return void (timer = setTimeout(checkTime, left));
      // Answered already (committed, or refused and rolled back) and only closing its connection:
      // the answer stands (exit below); the process is ended without asking the ledger anything.
      if (reply) return void child.kill('SIGKILL');
      const notCounted = [
        // Under a millisecond is not worth a word (a lock granted at once still took a little time).
        ...(Math.round(gaveWayMs) > 0 ? [`${Math.round(gaveWayMs)} ms given way to the webhook receiver`] : []),
        ...(Math.round(lockWaitMs) > 0 ? [`${Math.round(lockWaitMs)} ms waiting for another import of the environment`] : []),
      ];
      const overrun = `import did not finish within ${options.timeoutMs} ms${notCounted.length > 0 ? ` (and ${notCounted.join(' and ')})` : ''}`;
      if (!options.ledgerHeld) return kill(new ImportCrashedError(`${overrun}: stopped`));
      // A connection a failover left half-open, or a statement waiting on another session's lock, is
      // the ledger's fault, not the file's: ask the server before blaming the file. Asking ends the
      // import's backend, so the child may answer with that connection's loss before the verdict
      // is in: the verdict, not that answer, says how the import ended (exit below).
      verdict = options.ledgerHeld(connected.backendPid).then(
        (held) =>
          held === undefined
            ? new ImportCrashedError(`${overrun}: stopped`)
            : new ImportLedgerStalledError(`${overrun}: stopped; ${held.reason}`, { mayBeStored: held.mayBeStored ?? false }),
        (error: unknown) => new ImportLedgerStalledError(`${overrun}: stopped; the ledger could not be asked why (${(error as Error).message})`),
      );
      void verdict.then(kill);
    };
    // Only when the limit came before any answer: an answer after it may be the loss of the
    // connection the verdict's question ended, and the verdict says how the import ended.
    let verdict: Promise<Error> | undefined;
    let exited = false;
    // The child's backend, and the time from the fork until it named it: its start, not the import's work.
    let connected: { backendPid: number; afterMs: number } | undefined;
    const startLimitMs = options.startLimitMs ?? Math.max(options.timeoutMs, IMPORT_START_LIMIT_MS);
    let timer = setTimeout(checkTime, startLimitMs);
    const relay =
      options.pressureMs &&
      setInterval(() => {
        // The child may be exiting between `connected` and the write (CI saw EPIPE here after the
        // child had replied). Pressure is advice to a live child; a lost one is nobody's error, and
        // without a callback Node would raise it as the child's 'error', failing a finished import.
        if (child.connected) child.send({ pressureMs: options.pressureMs!() } satisfies PressureMessage, ignoreLostAdvice);
      }, PRESSURE_RELAY_MS);
    const onAbort = () => kill(new ImportStoppedError('import stopped: shutting down'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    child.on('message', (message: ChildReply | GaveWayMessage | LockWaitMessage | BackendMessage) => {
      if ('gaveWayMs' in message) gaveWayMs = message.gaveWayMs;
      else if ('backendPid' in message) {
        if (connected || exited) return;
        connected = { backendPid: message.backendPid, afterMs: performance.now() - started };
        // From here the import's own time runs.
        clearTimeout(timer);
        timer = setTimeout(checkTime, options.timeoutMs);
      }
      else if ('lockWait' in message) {
        if (message.lockWait === 'waiting') lockWaitSince ??= performance.now();
        else if (lockWaitSince !== undefined) {
          lockWaitMs += performance.now() - lockWaitSince;
          lockWaitSince = undefined;
        }
      } else reply = message;
    });
    const cleanUp = () => {
      clearTimeout(timer);
      if (relay) clearInterval(relay);
      options.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (error) => {
      // A process that could not be started emits no 'exit' (Node's child_process docs).
      if (child.pid === undefined) {
        cleanUp();
        return reject(error);
      }
      kill(error);
    });
    child.on('exit', (code, signal) => {
      exited = true;
      cleanUp();
      // A stored file's answer stands whatever stopped the process after it (kill above).
      if (reply?.ok) return resolve(reply.peakRssMb === undefined ? reply.result : { ...reply.result, peakRssMb: reply.peakRssMb });
      if (why) return reject(why);
      if (verdict) return void verdict.then(reject);
      if (reply) {
        if (reply.changed) return reject(new FileChangedError(reply.message));
        if (reply.refused) return reject(Object.assign(new StatementFormatError(reply.message), { peakRssMb: reply.peakRssMb }));
        return reject(Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {}, { peakRssMb: reply.peakRssMb }));
      }
      const last = stderr.trim().split('\n').slice(-3).join(' | ');
      reject(new ImportCrashedError(`import process died (${signal ?? `exit code ${code}`}) with heap limit ${options.maxMemoryMb} MB${last ? `: ${last}` : ''}`));
    });
    child.send({ ...request, maxMemoryMb: options.maxMemoryMb } satisfies ChildRequest, (error) => {
      if (error) kill(error);
    });
  });
}

function ignoreLostAdvice(): void {}
