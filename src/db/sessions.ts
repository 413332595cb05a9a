import postgres, { type Sql } from 'postgres';
import { noDelaySockets } from './socket.js';

/**
 * Database sessions of their own, beside the pool, for state that lives on one session (a
 * session-level advisory lock, jobs/session-lock.ts). Each is a one-connection client, not
 * `sql.reserve()`: postgres.js 3.4 writes a query for a reserved connection that the server has
 * closed to a null socket and throws from a setImmediate (an uncaught exception, seen in
 * test/poller/scheduler.test.ts), and releasing such a connection hands the dead socket back to
 * the pool. A separate client reconnects by itself on its next query.
 *
 * A session given back clean is kept for the next taker: opening one costs a connection and its
 * authentication (7.9 ms with the lock and unlock, median of 30 on loopback), which a job paid on
 * every run. Kept sessions follow the pool's policy (createSqlClient: idle 60 s, lifetime 30 min):
 * one unused for `idleMs` is ended, and one older than `lifetimeMs` is ended when given back
 * instead of kept, so a session whose peer vanished silently (a half-open socket after a
 * failover) is not reused for longer than a pool connection would be. After `end`, sessions given
 * back are ended too.
 */
export interface DedicatedSessions {
  /** A kept session (`reused`), or a new one (connected by its first query); `fresh`: always new. */
  take(options?: { fresh?: boolean }): { session: Sql; reused: boolean };
  /** Back for reuse: only a session whose session state the giver restored (its locks released). */
  give(session: Sql): void;
  /** Ends a session whose state is unknown (a failed query, a lock that could not be released). */
  discard(session: Sql): Promise<void>;
  /** Ends the kept sessions, and from then on every session given back. */
  end(): Promise<void>;
  /**
   * Ends every session at once, kept or taken, failing the queries that wait on them; a session
   * taken later is ended as it is made, so its first query fails at once. For a stop while the
   * ledger does not answer (daemon/silent-ledger-on-stop.ts).
   */
  endNow(): void;
  /**
   * Calls `listener` when the session's connection closes (the server ended it, or it was
   * ended), until the returned function is called. A session lock learns so at once that its
   * lock is gone when the server ends the session, without waiting for its heartbeat.
   */
  onClose(session: Sql, listener: () => void): () => void;
}

export interface DedicatedSessionsOptions {
  /** How long a kept session may sit unused before it is ended. */
  idleMs?: number;
  /** How long a session may live: older ones are ended when given back. */
  lifetimeMs?: number;
  /** How many sessions are kept at most: one per job that runs under a session lock is enough. */
  maxKept?: number;
}

export function dedicatedSessions(sql: Sql, options: DedicatedSessionsOptions = {}): DedicatedSessions {
  const idleMs = options.idleMs ?? 60_000;
  const lifetimeMs = options.lifetimeMs ?? 30 * 60_000;
  const maxKept = options.maxKept ?? 4;
  const kept: { session: Sql; timer: NodeJS.Timeout }[] = [];
  const opened = new WeakMap<Sql, number>();
  const closeListeners = new WeakMap<Sql, Set<() => void>>();
  // Every session not yet ended, kept or taken: endNow reaches the ones a job holds too.
  const live = new Set<Sql>();
  let ended = false;
  let endedNow = false;
  const endSession = (session: Sql, timeout = 2) => {
    live.delete(session);
    return session.end({ timeout }).catch(() => undefined);
  };
  return {
    take(takeOptions = {}) {
      const entry = takeOptions.fresh ? undefined : kept.pop();
      if (entry) {
        clearTimeout(entry.timer);
        return { session: entry.session, reused: true };
      }
      const listeners = new Set<() => void>();
      const session = sessionClient(sql, () => {
        for (const listener of [...listeners]) listener();
      });
      closeListeners.set(session, listeners);
      opened.set(session, Date.now());
      if (endedNow) void endSession(session, 0);
      else live.add(session);
      return { session, reused: false };
    },
    give(session) {
      if (ended || kept.length >= maxKept || Date.now() - (opened.get(session) ?? 0) > lifetimeMs) {
        void endSession(session);
        return;
      }
      const entry = {
        session,
        timer: setTimeout(() => {
          const at = kept.indexOf(entry);
          if (at >= 0) kept.splice(at, 1);
          void endSession(session);
        }, idleMs),
      };
      entry.timer.unref();
      kept.push(entry);
    },
    discard: (session) => endSession(session),
    onClose(session, listener) {
      const listeners = closeListeners.get(session);
      listeners?.add(listener);
      return () => void listeners?.delete(listener);
    },
    async end() {
      ended = true;
      const all = kept.splice(0);
      for (const entry of all) clearTimeout(entry.timer);
      await Promise.all(all.map((entry) => endSession(entry.session)));
    },
    endNow() {
      ended = true;
      endedNow = true;
      for (const entry of kept.splice(0)) clearTimeout(entry.timer);
      for (const session of [...live]) void endSession(session, 0);
    },
  };
}

/**
 * A one-connection client to the same server and database as `sql`, with the same settings (with
 * several hosts, in the order `sql` tries them now: db/writable-host.ts).
 */
function sessionClient(sql: Sql, onclose: () => void): Sql {
  const o = sql.options;
  const options = {
    host: o.host as unknown as string,
    port: o.port as unknown as number,
    ...(o.path ? { path: o.path } : {}),
    database: o.database,
    user: o.user,
    ...(o.pass ? { pass: o.pass } : {}),
    ssl: o.ssl,
    max: 1,
    connect_timeout: o.connect_timeout,
    backoff: o.backoff,
    // 0 disables both: a session must not be recycled while it holds a lock; idleMs above ends
    // it once it is given back and unused.
    idle_timeout: 0,
    max_lifetime: 0,
    onnotice: () => {},
    onclose,
    // TimeZone as the pool's (database.ts says why).
    connection: { application_name: String(o.connection.application_name ?? 'bnpl-recon'), TimeZone: 'UTC' },
    // As the pool's (database.ts): TCP_NODELAY, the first host that answers (socket.ts).
    socket: noDelaySockets(),
  };
  return postgres(options);
}
