import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { fileSource, importLimits, importStatementSource, type ImportResult } from './import.js';
import { IMPORT_APPLICATION_NAME, importInChildProcess, type LedgerHeld } from './isolated-import.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CsvOptions } from './csv.js';
import { RECEIVER_PACE } from './store-pipeline.js';

/** What importing a file as the daemon does needs: the settings, the ledger, and the stop signal. */
export interface DaemonImportContext {
  config: Pick<
    Config,
    'PROVIDER_ENV' | 'DATABASE_URL' | 'STATEMENT_MAX_FILE_BYTES' | 'STATEMENT_MAX_AMOUNT_CENTS' | 'STATEMENT_ACCEPT_UNBALANCED' | 'STATEMENT_IMPORT_MAX_MEMORY_MB' | 'STATEMENT_IMPORT_TIMEOUT_SECONDS'
  >;
  database: Database;
  /** aborted when the daemon stops: an import in a child process is then stopped (ImportStoppedError) */
  signal?: AbortSignal | undefined;
  /** the webhook receiver beside it: the import yields to its commit pressure (store-pipeline.ts) */
  receiver?: { commitPressureMs(): number } | undefined;
}

/**
 * The niceness of an import process beside the receiver: batch work, which the kernel should
 * preempt whenever the receiver's process wants a core (2 cores on the bench machine: the import's
 * process, its Postgres backend, the receiver and the receiver's commits share them). Nice 10
 * weighs a tenth of nice 0 in Linux's scheduler (bench/README.md import-ingest).
 */
const IMPORT_NICENESS = 10;

/**
 * One statement file imported by the daemon, as the inbox and the operator API's upload both do:
 * in a child process with its own heap limit and time limit when the ledger's address is known
 * (DATABASE_URL, or the embedded server this process started), so a huge or hostile file cannot
 * stall or kill the daemon (isolated-import.ts); in this process otherwise. The file is opened
 * without following a symlink. STATEMENT_ACCEPT_UNBALANCED and the limits come from the settings;
 * `csv` from csvSettings (read by the caller, which decides what a broken profile file means).
 * `name` is the file's name as recorded and quoted in refusals.
 */
export function importStatementAsDaemon(ctx: DaemonImportContext, file: string, name: string, csv: CsvOptions): Promise<ImportResult> {
  const limits = importLimits(ctx.config);
  const acceptUnbalanced = ctx.config.STATEMENT_ACCEPT_UNBALANCED;
  const databaseUrl = ctx.config.DATABASE_URL ?? ctx.database.embeddedUrl;
  const receiver = ctx.receiver;
  const pressureMs = receiver && (() => receiver.commitPressureMs());
  if (databaseUrl === undefined) {
    return importStatementSource(ctx.database, ctx.config.PROVIDER_ENV, fileSource(file, { noFollow: true }), name, {
      ...limits, csv, acceptUnbalanced, ...(pressureMs ? { yieldTo: { pressureMs, pace: RECEIVER_PACE } } : {}),
    });
  }
  return importInChildProcess(
    {
      databaseUrl, environment: ctx.config.PROVIDER_ENV, file, name, maxFileBytes: ctx.config.STATEMENT_MAX_FILE_BYTES, maxAmountCents: String(limits.maxAmountCents),
      acceptUnbalanced, csv, yieldToReceiver: pressureMs !== undefined,
    },
    {
      maxMemoryMb: ctx.config.STATEMENT_IMPORT_MAX_MEMORY_MB, timeoutMs: ctx.config.STATEMENT_IMPORT_TIMEOUT_SECONDS * 1000,
      ...(ctx.signal ? { signal: ctx.signal } : {}), ...(pressureMs ? { pressureMs, niceness: IMPORT_NICENESS } : {}),
      ledgerHeld: (pid) => ledgerHeldImport(ctx.database, pid),
    },
  );
}

/** How long the question to the server at an import's time limit may take before the ledger counts as not answering. */
const LEDGER_QUESTION_MS = 5_000;

/**
 * At an import's time limit, why the ledger rather than the import's own work held it, from the
 * server's view of the import's backend (pg_stat_activity), asked over the daemon's own pool:
 *  - the ledger does not answer within LEDGER_QUESTION_MS, or the question fails: the ledger's;
 *  - the backend is gone (the server ended it, a failover, a network that dropped it while the
 *    import waited on an answer that will never come): the ledger's;
 *  - the backend waits on a lock or a buffer pin another session holds: the ledger's;
 *  - the backend is idle after its commit or rollback, the answer lost on the way: the ledger's;
 *  - anything else (idle, waiting for the client's rows, or working on the import's statement,
 *    which a large file makes long): the import's own work took the time, so the file is at fault
 *    (undefined), as it would be on every later try.
 * The backend is then ended when it is still the import's (its application name and start), as its
 * process is killed either way: a backend waiting on a lock does not notice its client is gone until
 * the lock is granted, and until then kept the environment's import lock, so every later import
 * waited behind it.
 */
export async function ledgerHeldImport(database: Database, backendPid: number): Promise<LedgerHeld | undefined> {
  const asked = database.sql<{ wait_event_type: string | null; wait_event: string | null; backend_start: string; state: string | null; query: string | null }[]>`
    select wait_event_type, wait_event, backend_start::text, state, query from pg_stat_activity
    where pid = ${backendPid} and application_name = ${IMPORT_APPLICATION_NAME}`;
  const answer = await Promise.race([asked, sleep(LEDGER_QUESTION_MS, 'no answer' as const, { ref: false })]).catch((error: unknown) => error as Error);
  if (answer === 'no answer') {
    asked.cancel?.();
    return { reason: `the ledger did not answer within ${LEDGER_QUESTION_MS} ms` };
  }
  if (answer instanceof Error) return { reason: `the ledger could not be asked (${answer.message})` };
  const [backend] = answer;
  if (!backend) return { reason: `its database connection (backend ${backendPid}) is gone` };
  const terminated = database.sql`
    select pg_terminate_backend(pid) from pg_stat_activity
    where pid = ${backendPid} and application_name = ${IMPORT_APPLICATION_NAME} and backend_start = ${backend.backend_start}::timestamptz`.catch(() => undefined);
  // Bounded as the question is: a ledger that answered it and then stalls must not keep the import alive.
  await Promise.race([terminated, sleep(LEDGER_QUESTION_MS, undefined, { ref: false })]);
  if (backend.wait_event_type === 'Lock' || backend.wait_event_type === 'BufferPin') {
    return { reason: `the database held its statement waiting on ${backend.wait_event_type} ${backend.wait_event ?? ''} (another session's)` };
  }
  // Its transaction ended at the server (the commit or the rollback was its last statement) and
  // the answer has not reached the import: the network's time, not the file's. A stored statement
  // is found imported at the next scan.
  const last = backend.query?.trim().toLowerCase();
  if (backend.state === 'idle' && (last === 'commit' || last === 'rollback')) {
    return { reason: `its transaction ended at the server (${last}) and the answer did not reach the import`, mayBeStored: last === 'commit' };
  }
  return undefined;
}
