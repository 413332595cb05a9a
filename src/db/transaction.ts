import type { Sql, TransactionSql } from 'postgres';
import { errorCode, SQLSTATE } from './errors.js';

/**
 * `sql.begin(body)` that survives its connection dying under it. Every transaction of src/ goes
 * through here (test/architecture.test.ts holds it).
 *
 * postgres.js 3.4.9 answers a body that failed with ROLLBACK on the transaction's connection. When
 * the failure was that connection closing (the primary killed in a failover, pg_terminate_backend,
 * a session timeout), closed() has already set its socket to null; the ROLLBACK, a small write, is
 * flushed from a setImmediate, and the TypeError "Cannot read properties of null (reading 'write')"
 * it throws there escapes every promise and ends the process (porsager/postgres#1208, #1154; the
 * fixes, #1168, #1209 and #1215, are not released). Seen here: a daemon replica exited at the
 * SIGKILL of the primary in test/e2e/failover.ts when a poll write or a reconciliation pass was in
 * flight; with pg_terminate_backend it happens every time (test/db/transaction.test.ts).
 *
 * So a body that failed because the connection is gone is left unsettled: postgres.js then writes
 * no ROLLBACK, and begin() rejects all the same, with the close (it races the body against its
 * connection's close). The server rolled the transaction back when the session ended. If the
 * failure only looked like a lost connection (a lock session of another client, say) and this
 * transaction's connection does not close within CLOSE_WAIT_MS, the failure goes through as any
 * other, and the ROLLBACK goes to a live connection.
 */
export async function transaction<T>(sql: Sql, body: (tx: TransactionSql) => Promise<T>): Promise<T> {
  let closed = () => {};
  const connectionClosed = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const result = sql.begin((tx) =>
    new Promise<T>((resolve, reject) => {
      body(tx).then(resolve, (error: unknown) => {
        if (!isConnectionLoss(error)) return reject(error);
        const fallback = setTimeout(() => reject(error), CLOSE_WAIT_MS);
        void connectionClosed.then(() => clearTimeout(fallback));
      });
    }),
  );
  // Rejects when the connection closes while the body runs (and when the body failed otherwise,
  // where no fallback waits): either way nothing is left to wait for.
  result.catch(() => closed());
  return (await result) as T;
}

/**
 * From a failed query to the close of its connection: the socket's 'close' follows its 'error' by
 * a tick, and a FATAL ErrorResponse (57P01) is followed by the server closing the session, a read
 * later on loopback. A second is room for a loaded machine, and costs only a transaction that
 * failed for another reason and looked like a lost connection.
 */
const CLOSE_WAIT_MS = 1000;

const CONNECTION_LOSS_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  SQLSTATE.ADMIN_SHUTDOWN,
  SQLSTATE.CRASH_SHUTDOWN,
  // idle_in_transaction_session_timeout and transaction_timeout end the session with these (FATAL).
  '25P03',
  '25P04',
]);

/** The failure of a query whose connection is gone (or going): nothing more can be written to it. */
export function isConnectionLoss(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && (CONNECTION_LOSS_CODES.has(code) || code.startsWith('08'));
}
