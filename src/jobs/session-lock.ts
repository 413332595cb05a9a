import type { Sql, TransactionSql } from 'postgres';
import { answerWithin } from '../db/answer-within.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';

/**
 * A singleton across replicas sharing the database: a session-level advisory lock. The database
 * decides rather than any in-process flag: the lock lives on one connection of its own, so Postgres
 * releases it by itself when that session ends (crash, network loss, pg_terminate_backend) and
 * another replica can take over at its next tick.
 *
 * The holder must notice such a loss too, or two processes would run at once. A heartbeat asks
 * pg_locks whether *this* backend still holds the lock; asking merely "select 1" is not enough,
 * because the driver transparently reconnects and would answer from a fresh session without the
 * lock. On a failed or negative heartbeat `lost` aborts, and the current run stops. Writes that
 * must never come from a run that lost its lock check `assertStillHeld` in their own transaction.
 *
 * The session is one of the database's dedicated sessions (db/sessions.ts). Released with its
 * lock unlocked, it goes back for the next run; lost, or not cleanly unlocked, it is ended, so
 * its lock cannot outlive the holder's release.
 */
export interface SessionLock {
  readonly key: bigint;
  /** The backend holding the lock: fencing checks ask whether it still does. */
  readonly pid: number;
  /** Aborts when the lock is known to be gone, or is released. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export interface SessionLockOptions {
  /** For log lines: "poll", "reconcile", "migrations". */
  name: string;
  log: Logger;
  /** How often the holder checks that it still holds the lock; 0: never (short holds). */
  heartbeatMs: number;
}

const HELD = (key: bigint, pid: number | null) => `
  select exists (
    select 1 from pg_locks
    where locktype = 'advisory' and granted and pid = ${pid === null ? 'pg_backend_pid()' : String(pid)}
      and ((classid::bigint << 32) | objid::bigint) = ${key.toString()} and objsubid = 1
  ) as held`;

/**
 * The least time a heartbeat waits for its answer (else twice the interval): room for a loaded
 * server, well inside the replicas' takeover bound.
 */
const HEARTBEAT_DEADLINE_FLOOR_MS = 2000;

/** Returns the lock, or undefined when another session holds it. */
export async function tryAcquireSessionLock(database: Database, key: bigint, options: SessionLockOptions): Promise<SessionLock | undefined> {
  // The server's writability in the same round trip: a standby or a read-only server grants
  // advisory locks too, and a job holding one there could write nothing.
  const lockOn = (session: Sql) =>
    session<{ ok: boolean; pid: number; read_only: boolean }[]>`select pg_try_advisory_lock(${key.toString()}::bigint) as ok, pg_backend_pid() as pid, pg_is_in_recovery() or current_setting('transaction_read_only') = 'on' as read_only`;
  let { session: connection, reused } = database.sessions.take();
  let rows: { ok: boolean; pid: number; read_only: boolean }[];
  for (;;) {
    try {
      rows = await lockOn(connection);
      break;
    } catch (error) {
      await database.sessions.discard(connection);
      // A kept session the server closed while it sat unused (a restart, pg_terminate_backend)
      // may fail its next query before the driver has seen the close (ECONNRESET, seen in
      // test/jobs/session-lock.test.ts): once more, on a new session, whose failure is the
      // database's answer.
      if (!reused) throw error;
      options.log.debug({ err: error }, `${options.name} lock: its kept session failed; trying a new one`);
      ({ session: connection, reused } = database.sessions.take({ fresh: true }));
    }
  }
  if (rows[0]?.read_only === true) {
    // Unlocked by ending the session: its server is not the one to keep sessions on.
    await database.sessions.discard(connection);
    database.reportReadOnly(`the ${options.name} lock's session is on a read-only server`);
    throw new LedgerReadOnlyError(`${options.name}: the database refuses writes (a standby, or default_transaction_read_only is on)`);
  }
  if (rows[0]?.ok !== true) {
    database.sessions.give(connection);
    return undefined;
  }
  const pid = rows[0].pid;
  const controller = new AbortController();
  const markLost = (reason: string, error?: unknown) => {
    if (controller.signal.aborted) return;
    options.log.warn({ err: error, pid }, `${options.name} lock lost: ${reason}`);
    controller.abort(new Error(`${options.name} lock lost: ${reason}`));
  };
  // The server ended the session (pg_terminate_backend, its shutdown or crash): the lock went with
  // it, known at once rather than at the next heartbeat.
  const stopWatching = database.sessions.onClose(connection, () => markLost('its database session ended'));
  let beating = false;
  // A heartbeat that gets no answer is a loss too. After a failover that leaves the connection
  // half-open (the old primary gone without a reset reaching this host) a query waits until TCP
  // gives up, ~15 min on Linux, while another replica holds the lock
  // (test/jobs/session-lock.test.ts): the session is ended so nothing waits on it any more.
  const deadlineMs = Math.max(2 * options.heartbeatMs, HEARTBEAT_DEADLINE_FLOOR_MS);
  const timer =
    options.heartbeatMs > 0
      ? setInterval(() => {
          if (beating || controller.signal.aborted) return;
          beating = true;
          answerWithin(connection.unsafe<{ held: boolean }[]>(HELD(key, null)), deadlineMs, () => 'timeout' as const)
            .then(
              (result) => {
                if (result === 'timeout') {
                  markLost(`its heartbeat got no answer within ${deadlineMs} ms`);
                  void database.sessions.discard(connection);
                } else if (result[0]?.held !== true) markLost('the session no longer holds it');
              },
              (error: unknown) => markLost('its database connection failed', error),
            )
            .finally(() => {
              beating = false;
            });
        }, options.heartbeatMs)
      : undefined;
  timer?.unref();
  let releasing: Promise<void> | undefined;
  return {
    key,
    pid,
    lost: controller.signal,
    release() {
      releasing ??= (async () => {
        clearInterval(timer);
        stopWatching();
        const wasLost = controller.signal.aborted;
        // Leader status ends before the database lets another session take the lock, so two
        // replicas never both report themselves leader (bnpl_recon_*_lock_held, /readyz).
        controller.abort(new Error(`${options.name} lock released`));
        const unlocked =
          !wasLost &&
          (await connection<{ unlocked: boolean }[]>`select pg_advisory_unlock(${key.toString()}::bigint) as unlocked`.then(
            (result) => result[0]?.unlocked === true,
            (error: unknown) => {
              options.log.warn({ err: error }, `${options.name} lock unlock failed`);
              return false;
            },
          ));
        if (unlocked) database.sessions.give(connection);
        else await database.sessions.discard(connection);
      })();
      return releasing;
    },
  };
}

/**
 * Fencing: inside a writer's own transaction, fails it unless the lock's session still holds the
 * lock, so a run that lost its lock (its session killed while its process lives) cannot write
 * beside the new holder even before its heartbeat notices.
 */
export async function assertStillHeld(tx: TransactionSql | Sql, lock: Pick<SessionLock, 'key' | 'pid'>): Promise<void> {
  const [row] = await tx.unsafe<{ held: boolean }[]>(HELD(lock.key, lock.pid));
  if (row?.held !== true) throw new LockLostError(`the lock ${lock.key} is no longer held by backend ${lock.pid}: this run must not write`);
}

/** The lock was granted on a server that refuses writes: the job cannot run there. */
export class LedgerReadOnlyError extends Error {
  override readonly name = 'LedgerReadOnlyError';
}

export class LockLostError extends Error {
  override readonly name = 'LockLostError';
}

/** A transaction-level advisory lock: waits for the key, released at commit or rollback. */
export async function transactionLock(tx: TransactionSql, key: bigint): Promise<void> {
  await tx`select pg_advisory_xact_lock(${key.toString()}::bigint)`;
}

/** The transaction lock, or false at once when another transaction holds it. */
export async function tryTransactionLock(tx: TransactionSql, key: bigint): Promise<boolean> {
  const [row] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${key.toString()}::bigint) as locked`;
  return row?.locked === true;
}
