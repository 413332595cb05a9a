import type { Sql } from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import * as schema from '../schema/tables.js';
import type { Database, LedgerDb } from '../db/database.js';
import { transaction } from '../db/transaction.js';

/**
 * How long after the operator API's ledger deadline the server cancels the read's statement. The
 * request is answered 503 at the deadline by the guard (operator-api.ts), which logs why; the
 * statement ends half a second later, so that the answer and its log line are always the guard's
 * and never a race between the guard's timer and the server's.
 */
export const CANCEL_AFTER_DEADLINE_MS = 500;

/** The read began after its deadline had passed (it waited that long for a pool connection): it is not run. */
export class ReadTooLate extends Error {
  override readonly name = 'ReadTooLate';
}

/**
 * Runs one operator read in a transaction of the pool whose statements the server itself cancels
 * once the request's deadline has passed (`statement_timeout`, local to the transaction), so that a
 * read answered 503 at the deadline gives its connection back to the pool instead of waiting on
 * with it: otherwise a read stuck behind a lock (a migration's ACCESS EXCLUSIVE, a VACUUM FULL)
 * keeps its connection until the lock goes, and DB_POOL_MAX such requests leave the receiver and
 * the reconciliation without one (test/http/ledger-deadline-cancel.test.ts).
 *
 * Why statement_timeout and not postgres.js's `query.cancel()` at the deadline: a cancel request
 * goes on a new connection with the backend's pid, so it needs the server to accept one just then
 * (a server restarting refuses it, and postgres.js 3.4.9 then rejects a promise that
 * `Query.cancel()` drops: an unhandled rejection, which ends the process; seen with a cancel sent
 * through a proxy that stopped accepting, ECONNREFUSED); it reaches whatever
 * that backend runs when it arrives, which may already be the next request's statement, or a
 * webhook's commit; and it needs every query of the request, including the cursor of a streamed
 * report, in hand. statement_timeout is enforced by the server on the statement itself, whatever
 * the client's state, and `set_config(..., true)` ends with the transaction, so no connection goes
 * back to the pool with a timeout of this request's.
 *
 * The bound is per statement, from the time left at the transaction's start: a stuck statement is
 * cancelled CANCEL_AFTER_DEADLINE_MS after the deadline; each later batch of a streamed report (an
 * Execute of 1,000 rows, milliseconds) may take as long again. What cannot be cancelled this way is
 * a server that stops answering altogether (no statement runs to time out): that is the deadline's
 * own case, answered 503 all the same.
 */
export async function boundedRead<T>(database: Database, deadlineAt: number, read: (ledger: Database) => Promise<T>): Promise<T> {
  return transaction(database.sql, async (tx) => {
    const left = Math.ceil(deadlineAt - performance.now());
    // Answered 503 while this waited for a connection: nothing to read for.
    if (left <= 0) throw new ReadTooLate('the read began after the ledger deadline had passed: not run');
    await tx`select set_config('statement_timeout', ${String(left + CANCEL_AFTER_DEADLINE_MS)}, true)`;
    return read(readerOver(database, tx as unknown as Sql));
  });
}

/** The Database a read's handler is given: its transaction's client; drizzle over it when asked for. */
function readerOver(database: Database, sql: Sql): Database {
  let db: LedgerDb | undefined;
  return {
    ...database,
    sql,
    get db() {
      return (db ??= drizzle(sql, { schema }));
    },
  };
}
