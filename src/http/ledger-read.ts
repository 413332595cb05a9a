import type { Sql } from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import * as schema from '../schema/tables.js';
import type { Database, LedgerDb } from '../db/database.js';
import { transaction } from '../db/transaction.js';

/**
 * How long after the operator API's ledger deadline the server gives up a read's wait for a lock.
 * The request is answered 503 at the deadline by the guard (operator-api.ts), which logs why; the
 * wait ends half a second later, so that the answer and its log line are always the guard's and
 * never a race between the guard's timer and the server's.
 */
export const CANCEL_AFTER_DEADLINE_MS = 500;

/** The read began after its deadline had passed (it waited that long for a pool connection): it is not run. */
export class ReadTooLate extends Error {
  override readonly name = 'ReadTooLate';
}

/**
 * Runs one operator read in a transaction of the pool whose waits for a lock the server itself
 * gives up once the request's deadline has passed (`lock_timeout`, local to the transaction), so
 * that a read answered 503 at the deadline gives its connection back to the pool instead of waiting
 * on with it: otherwise a read stuck behind a lock (a migration's ACCESS EXCLUSIVE, a VACUUM FULL)
 * keeps its connection until the lock goes, and DB_POOL_MAX such requests leave the receiver and
 * the reconciliation without one (test/http/ledger-deadline-cancel.test.ts).
 *
 * Why lock_timeout and not statement_timeout: a streamed report is one statement read through a
 * cursor, and postgres.js 3.4.9 sends each of the cursor's Executes with Flush, not Sync
 * (node_modules/postgres/src/connection.js, Execute); Postgres arms statement_timeout at a
 * statement's first Execute and disarms it only when the statement completes or at Sync, so the
 * timeout ran over the whole download, the time its client took to read included. A report read
 * for longer than the deadline was cut off ("canceling statement due to statement timeout"), though
 * http-api.md cuts a download only when the ledger fails or its client stalls for 30 s
 * (test/http/long-report-download-outlives-deadline.test.ts). A lock, by contrast, is taken when a
 * statement starts (its relations' AccessShareLock, at parse and plan, held to the transaction's
 * end), so a report that has begun to stream waits for none, and is never cut by this however long
 * it takes.
 *
 * What it does not bound: a statement that runs slowly but runs (a large sort, a loaded server) is
 * not cancelled; it finishes, its answer dropped, and frees its connection then, as any read did
 * before this bound. The bound is per lock wait, from the time left at the transaction's start: a
 * read of several statements (a finding's evidence, the overview) whose first took most of the
 * deadline may wait on a lock in a later one about as long again. And a server that stops answering
 * altogether gives up nothing: that is the deadline's own case, answered 503 all the same.
 *
 * Why not postgres.js's `query.cancel()` at the deadline: a cancel request goes on a new
 * connection with the backend's pid, so it needs the server to accept one just then (a server
 * restarting refuses it, and postgres.js 3.4.9 then rejects a promise that `Query.cancel()` drops:
 * an unhandled rejection, which ends the process; seen with a cancel sent through a proxy that
 * stopped accepting, ECONNREFUSED); it reaches whatever that backend runs when it arrives, which may
 * already be the next request's statement, or a webhook's commit; and it needs every query of the
 * request, including the cursor of a streamed report, in hand. lock_timeout is enforced by the
 * server on the wait itself, whatever the client's state, and `set_config(..., true)` ends with the
 * transaction, so no connection goes back to the pool with a timeout of this request's.
 */
export async function boundedRead<T>(database: Database, deadlineAt: number, read: (ledger: Database) => Promise<T>): Promise<T> {
  return transaction(database.sql, async (tx) => {
    const left = Math.ceil(deadlineAt - performance.now());
    // Answered 503 while this waited for a connection: nothing to read for.
    if (left <= 0) throw new ReadTooLate('the read began after the ledger deadline had passed: not run');
    await tx`select set_config('lock_timeout', ${String(left + CANCEL_AFTER_DEADLINE_MS)}, true)`;
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
