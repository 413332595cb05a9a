import postgres, { type Options, type PostgresType, type Sql } from 'postgres';
import type { Logger } from '../log/logger.js';
import { answerWithin } from './answer-within.js';
import { formatDatabaseUrl, type DatabaseUrl } from './database-url.js';

/** At most one switch of host per this many ms: during a failover no host may accept writes yet. */
const MIN_SWITCH_MS = 1000;
/** At most one replacement of the connections for a stall per this many ms (recycle()). */
const MIN_RECYCLE_MS = 5000;
/**
 * How long queries still running on a replaced client may take before its connections are
 * destroyed and they fail: a query on a connection that went silent never ends by itself.
 */
const RETIRE_TIMEOUT_S = 5;
/** How long recycle() waits for the server to say whether a long statement still runs (see there). */
const LONG_STATEMENT_CHECK_MS = 3000;

/**
 * The ledger client: over one host or several (DATABASE_URL with target_session_attrs=read-write
 * or primary), it ends up on the one that accepts writes, whichever it is now, and it replaces its
 * connections when they stop answering.
 *
 * postgres.js 3.4.9 is not given target_session_attrs: for read-write it checks only the
 * default_transaction_read_only a server reports, which a hot standby of Postgres 14 and later
 * reports as off (so it connected to a standby, measured by test/e2e/failover.test.ts's cluster),
 * and for primary it loops through the hosts while none is one, which left a query waiting
 * forever after the standby was promoted in the middle of that loop (seen with Postgres 15).
 * Instead each connection goes to the first host that answers, in order, and when a server says
 * it is read-only (in_hot_standby or default_transaction_read_only reported on, Postgres 14+, or a
 * write refused with SQLSTATE 25006, `readOnly()`) the client is replaced by one that starts at
 * the next host; the old one ends once its queries finish. Until a writable host is found every
 * write fails with 25006 or a connection error, which the callers treat as "unavailable, retry".
 *
 * With one host the same evidence reopens the client on that address: after a failover behind one
 * address (a -rw Service, HAProxy, a managed writer endpoint) the old primary may stay up
 * read-only, and under traffic the pool's connections to it never sit idle long enough to be
 * closed (test/db/ledger-client.test.ts). And a failover that leaves the connections half-open
 * (the old primary gone without a reset reaching this host) leaves their queries waiting until TCP
 * gives up, ~15 min on Linux: no socket option of postgres.js bounds a query's wait, so the caller
 * that sees the ledger stop answering (a readiness check that timed out, commits stalled past the
 * ack deadline) calls `recycle()`, and the client is replaced by a new one on the same address;
 * the old one's queries get RETIRE_TIMEOUT_S to finish, then fail (answered 503 by their callers).
 *
 * The returned Sql forwards to the current client, so whoever holds it (drizzle, the receiver's
 * writer, the dedicated sessions, which read `options`) follows a switch.
 */
export interface WritableHostClient {
  sql: Sql;
  /** Evidence that the current host refuses writes: switch to the next host, or reopen the only one (at most once a second). */
  readOnly(reason: string): void;
  /** The ledger stopped answering: new connections, on the same hosts (at most once every 5 s). */
  recycle(reason: string): void;
  /**
   * A connection runs statements that may take long (a reconciliation pass's transaction): while
   * its backend is working on the server the address leads to, recycle() keeps the connections.
   * Returns the function that removes the mark.
   */
  markLongStatements(backend: LongStatementBackend): () => void;
}

/** A server backend, named so that another server's backend with the same pid is not taken for it. */
export interface LongStatementBackend {
  pid: number;
  /** pg_stat_activity.backend_start as text (microseconds, UTC). */
  backendStart: string;
}

/** The client's controls, read from its Sql by databaseOver (database.ts) under this key. */
export const LEDGER_CLIENT_CONTROLS = Symbol('ledger client controls');
export type LedgerClientControls = Pick<WritableHostClient, 'readOnly' | 'recycle' | 'markLongStatements'>;

export function writableHostClient(url: DatabaseUrl, settings: Options<Record<string, PostgresType>>, log?: Logger): WritableHostClient {
  const target: DatabaseUrl = { ...url, params: new URLSearchParams(url.params) };
  target.params.delete('target_session_attrs');
  const hosts = target.hosts;
  let offset = 0;
  let lastSwitch = -Infinity;
  let lastRecycle = -Infinity;
  let ended = false;
  const retiring = new Set<Promise<void>>();
  const long = new Set<LongStatementBackend>();
  let checkingLong = false;

  const open = (overrides: Options<Record<string, PostgresType>> = {}): Sql => {
    const order = [...hosts.slice(offset), ...hosts.slice(0, offset)];
    const client: Sql = postgres(formatDatabaseUrl(target, order), {
      ...settings,
      ...overrides,
      onparameter: (key, value) => {
        if (client === current && value === 'on' && (key === 'in_hot_standby' || key === 'default_transaction_read_only')) switchHost(`the server reported ${key} = on`);
      },
    });
    return client;
  };
  let current = open();

  const replace = () => {
    const old = current;
    current = open();
    // What callers set on the client (drizzle's own parsers of dates and json) carries over.
    Object.assign(current.options.parsers, old.options.parsers);
    Object.assign(current.options.serializers, old.options.serializers);
    const ending = old.end({ timeout: RETIRE_TIMEOUT_S }).catch(() => undefined);
    retiring.add(ending);
    void ending.finally(() => retiring.delete(ending));
  };

  const switchHost = (reason: string) => {
    const now = performance.now();
    if (ended || now - lastSwitch < MIN_SWITCH_MS) return;
    lastSwitch = now;
    offset = (offset + 1) % hosts.length;
    replace();
    if (hosts.length > 1) log?.warn({ reason, next: hosts[offset] }, 'the database host refuses writes: connecting again, starting at the next host of DATABASE_URL');
    else log?.warn({ reason }, 'the database server refuses writes: connecting again, in case DATABASE_URL leads to a writable one now');
  };

  const recycleNow = (reason: string) => {
    lastSwitch = performance.now();
    replace();
    log?.warn({ reason }, 'the database stopped answering: opening new connections; queries on the old ones fail if they do not end within 5 s');
  };

  /**
   * Whether a marked backend is still working on the server the address leads to now, asked on a
   * connection of its own (the pool's may all be busy or silent): the same pid and start time (a
   * promoted standby has backends with the same small pids in a container), and a statement
   * running, or one that ended under a second ago (the pass between two statements). A server
   * that does not answer within LONG_STATEMENT_CHECK_MS, a backend gone, or one idle for longer
   * (its answer lost on a silent connection): false.
   */
  const longStatementRunning = async (backends: LongStatementBackend[]): Promise<boolean> => {
    const probe = open({ max: 1, idle_timeout: 0, max_lifetime: 0 });
    try {
      // The marks as a text parameter: typed json, postgres.js would encode the string once more.
      const running = probe<{ pid: number }[]>`
        select a.pid from json_to_recordset(${JSON.stringify(backends.map((b) => ({ pid: b.pid, started: b.backendStart })))}::text::json) as b(pid int, started timestamptz)
        join pg_stat_activity a on a.pid = b.pid and a.backend_start = b.started
        where a.state = 'active' or a.state_change > now() - interval '1 second'`;
      const rows = await answerWithin(running, LONG_STATEMENT_CHECK_MS, () => []);
      return rows.length > 0;
    } catch {
      return false;
    } finally {
      void probe.end({ timeout: 0 }).catch(() => undefined);
    }
  };

  /**
   * What recycle() sees is a caller that waited: the readiness check got no answer within 2 s
   * (http/health.ts), or a commit waited past the ack deadline (daemon/commit-stall-watch.ts).
   * Neither tells a silent connection from a busy server: a reconciliation pass's statements run
   * for seconds (a full pass at 1,000,000 orders: duplicate_delivery 2.1-2.9 s, missed_webhook
   * 1.9 s, bench/README.md; 260 s for the pass at 10,000,000), hold pool connections meanwhile
   * and load the server the commits wait on. Replacing the connections then cut the pass's
   * statement RETIRE_TIMEOUT_S later, on a server that answered all along, and the pass failed
   * with `write CONNECTION_CLOSED` (test/db/recycle-during-long-statement.test.ts); new
   * connections to the same busy server commit no faster. So while a connection is marked as
   * running long statements, the server is asked first: when it is working on one of them, the
   * pool is not silent and is kept. A half-open connection after a failover leaves no such backend
   * on the server the address leads to now, a server that does not answer cannot say so, and a
   * pass whose lock is lost unmarks its connection (reconcile/pass.ts): those are recycled as before.
   */
  const recycle = (reason: string) => {
    const now = performance.now();
    if (ended || checkingLong || now - lastRecycle < MIN_RECYCLE_MS) return;
    lastRecycle = now;
    if (long.size === 0) return recycleNow(reason);
    const backends = [...long];
    checkingLong = true;
    void longStatementRunning(backends).then((running) => {
      checkingLong = false;
      if (ended) return;
      if (running) log?.warn({ reason, longStatementBackends: backends.map((b) => b.pid) }, 'the database is slow, not silent: it is still running a long statement of this process, so the connections are kept');
      else recycleNow(reason);
    });
  };
  const markLongStatements = (backend: LongStatementBackend) => {
    const mark = { ...backend };
    long.add(mark);
    return () => void long.delete(mark);
  };
  const controls: LedgerClientControls = { readOnly: switchHost, recycle, markLongStatements };

  const end = async (options?: { timeout?: number }) => {
    ended = true;
    await Promise.all([current.end(options), ...retiring]);
  };
  const sql = new Proxy((() => undefined) as unknown as Sql, {
    apply: (_target, thisArg, args) => Reflect.apply(current as unknown as (...a: unknown[]) => unknown, thisArg, args),
    get: (_target, property) => {
      if (property === 'end') return end;
      if (property === LEDGER_CLIENT_CONTROLS) return controls;
      const value = Reflect.get(current, property) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
  return { sql, readOnly: switchHost, recycle, markLongStatements };
}
