import type { Sql, TransactionSql } from 'postgres';

/**
 * Cancels the statement the transaction `tx` runs when `signal` aborts (a stop at shutdown), so the
 * transaction fails with 57014 and rolls back whole instead of holding the stop: a statement
 * waiting on a lock or streaming a COPY ignores an AbortSignal on the client. Used by the payout
 * report import, the partition job (its DDL transactions and its archive's COPY) and the
 * reconciliation pass (reconcile/pass.ts, which also marks its connection for writable-host.ts).
 *
 * The cancel is `pg_cancel_backend` on another pool connection, for the backend and the very
 * transaction `tx` is (its pid and its start, pg_stat_activity.xact_start = now() in it), so it
 * never cancels a statement of a later transaction given the same connection. A cancel that finds
 * the backend between two statements cancels nothing (Postgres ignores it while reading a command),
 * so it is repeated every CANCEL_REPEAT_MS until the caller stops watching. The returned function
 * stops watching and waits for a cancel in flight: call it before the transaction ends, so no
 * cancel reaches its ROLLBACK or COMMIT.
 */
export async function cancelOnAbort(sql: Sql, tx: TransactionSql, signal: AbortSignal, known?: TransactionBackend): Promise<() => Promise<void>> {
  const self = known ?? (await transactionBackend(tx));
  signal.throwIfAborted();
  let watching = true;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<unknown> = Promise.resolve();
  const cancel = () => {
    if (!watching) return;
    inFlight = sql`
      select pg_cancel_backend(pid) from pg_stat_activity where pid = ${self.pid} and xact_start = ${self.started}::timestamptz`
      .catch(() => undefined)
      .finally(() => {
        if (watching) timer = setTimeout(cancel, CANCEL_REPEAT_MS);
      });
  };
  signal.addEventListener('abort', cancel, { once: true });
  return async () => {
    watching = false;
    signal.removeEventListener('abort', cancel);
    clearTimeout(timer);
    await inFlight;
  };
}

/** A transaction's backend: its pid and the transaction's start (now() in it), as text. */
export interface TransactionBackend {
  pid: number;
  started: string;
}

/** The backend and start of the transaction `tx` is, one round trip (a caller that read them already passes them to cancelOnAbort). */
async function transactionBackend(tx: TransactionSql): Promise<TransactionBackend> {
  const [row] = await tx<TransactionBackend[]>`select pg_backend_pid() as pid, now()::text as started`;
  return row!;
}

/** Between two cancels of one stop: a statement sent just after a cancel found none waits no longer than this. */
const CANCEL_REPEAT_MS = 200;
