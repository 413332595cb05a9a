import postgres, { type Sql, type TransactionSql } from 'postgres';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import * as schema from '../schema/tables.js';
import type { Logger } from '../log/logger.js';
import path from 'node:path';
import { EmbeddedPostgresError, findRunningEmbedded, hasEmbeddedLedger, startEmbeddedPostgres } from './embedded.js';
import { dedicatedSessions, type DedicatedSessions } from './sessions.js';
import { parseDatabaseUrl, WRITABLE_SESSION_ATTRS } from './database-url.js';
import { LEDGER_CLIENT_CONTROLS, writableHostClient, type LedgerClientControls } from './writable-host.js';
import { noDelaySockets } from './socket.js';
import type { TransactionBackend } from './cancel-on-abort.js';

export type LedgerDb = PostgresJsDatabase<typeof schema>;

export interface Database {
  /** postgres.js client: tagged templates for hand-written set-based SQL. */
  sql: Sql;
  /** drizzle over the same pool, for typed queries. */
  db: LedgerDb;
  /** Sessions of their own beside the pool, for session locks (sessions.ts); ended by close. */
  sessions: DedicatedSessions;
  /**
   * Evidence that the server refuses writes (SQLSTATE 25006, a standby): the client moves on to the
   * next host of DATABASE_URL, or reopens its only one (writable-host.ts), at most once a second.
   */
  reportReadOnly(reason: string): void;
  /**
   * Evidence that the ledger stopped answering on the pool's connections (a readiness check timed
   * out, commits stalled past the ack deadline): new connections, at most once every 5 s; queries
   * still waiting on the old ones fail 5 s later (writable-host.ts says why).
   */
  recycle(reason: string): void;
  /**
   * Marks the connection `tx` holds (a transaction's) as running statements that may take long,
   * until `done` is called: recycle() then asks the server whether it still works on one before it
   * replaces the connections (writable-host.ts says why). Returns the backend too: its pid, and
   * when the transaction began (what cancel-on-abort.ts needs to name it, read in the same round trip).
   */
  longStatements(tx: TransactionSql): Promise<{ backend: TransactionBackend; done: () => void }>;
  /** True when this process started the server itself (no DATABASE_URL). */
  embedded: boolean;
  /** Where it is; only set for an embedded server, whose address is chosen at start. */
  embeddedUrl?: string;
  close(timeoutSeconds?: number): Promise<void>;
  /**
   * Ends every connection at once, the pool's and the dedicated sessions': the queries waiting on
   * them fail now, and later ones at once. For a stop while the ledger does not answer
   * (daemon/silent-ledger-on-stop.ts); close still runs after it.
   */
  endNow(): void;
}

/**
 * A Database over a client made elsewhere (a child process, a test's server, a second replica):
 * close ends its dedicated sessions, then the client, then runs `afterClose` (an embedded
 * server's stop). Closing twice closes once.
 */
export function databaseOver(
  sql: Sql,
  options: { embedded?: boolean; embeddedUrl?: string; afterClose?: () => Promise<void>; closeTimeoutSeconds?: number; reportReadOnly?: (reason: string) => void } = {},
): Database {
  const sessions = dedicatedSessions(sql);
  // A client made by createLedgerClient carries its controls; another (a test's) has none.
  const controls = (sql as unknown as Record<symbol, LedgerClientControls | undefined>)[LEDGER_CLIENT_CONTROLS];
  let closing: Promise<void> | undefined;
  return {
    sql,
    db: drizzle(sql, { schema }),
    sessions,
    reportReadOnly: options.reportReadOnly ?? controls?.readOnly ?? (() => undefined),
    recycle: controls?.recycle ?? (() => undefined),
    async longStatements(tx) {
      const [row] = await tx<{ pid: number; started: string; xact_start: string }[]>`
        select pid, backend_start::text as started, now()::text as xact_start from pg_stat_activity where pid = pg_backend_pid()`;
      const done = controls?.markLongStatements({ pid: row!.pid, backendStart: row!.started }) ?? (() => undefined);
      return { backend: { pid: row!.pid, started: row!.xact_start }, done };
    },
    embedded: options.embedded ?? false,
    ...(options.embeddedUrl !== undefined ? { embeddedUrl: options.embeddedUrl } : {}),
    endNow() {
      sessions.endNow();
      // Timeout 0: postgres.js destroys the connections at once, failing their queries.
      void sql.end({ timeout: 0 }).catch(() => undefined);
    },
    close(timeoutSeconds = options.closeTimeoutSeconds ?? 5) {
      closing ??= (async () => {
        await sessions.end();
        await sql.end({ timeout: timeoutSeconds });
        await options.afterClose?.();
      })();
      return closing;
    },
  };
}

/**
 * What a command may do with the embedded ledger when DATABASE_URL is unset:
 * - `owner` (start, demo) runs its own server under the data directory;
 * - `creator` (migrate) uses a running one (the demo's, a start's) and otherwise starts the
 *   directory's own, creating it if need be;
 * - `writer` (poll, reconcile, the imports, ledger reparse) does the same, except that it refuses
 *   when the directory has no ledger of its own but the demo's stopped one is there: written
 *   through, it would make a new empty ledger that every later report reads instead of the demo's;
 * - `reader` (report, discrepancy ack) uses a running one or an existing ledger, and never answers
 *   from a ledger it would have to create (an empty report would read as "nothing wrong").
 */
export type LedgerAccess = 'owner' | 'creator' | 'writer' | 'reader';

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  access?: LedgerAccess;
  poolMax: number;
  applicationName?: string;
  log: Logger;
}

export interface SqlClientOptions {
  poolMax: number;
  applicationName?: string;
  log?: Logger;
}

/**
 * The client and its controls: one that finds the writable host and replaces connections that
 * stopped answering (writable-host.ts), over one host or several. postgres.js as is only for a URL
 * the parser does not take apart (it reads those in its own way), or several hosts without
 * target_session_attrs read-write or primary, where any host will do.
 */
export function createLedgerClient(url: string, options: SqlClientOptions): { sql: Sql; reportReadOnly: (reason: string) => void; recycle: (reason: string) => void } {
  const settings = {
    max: options.poolMax,
    // Short connect timeout: the webhook receiver must answer 503 well inside the provider's 5 s.
    connect_timeout: 2,
    idle_timeout: 60,
    max_lifetime: 60 * 30,
    // Reconnect attempts at most a second apart (postgres.js backs off up to 20 s), so a promoted
    // standby is found within about a second.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    onnotice: () => {},
    // Read committed whatever the server's or the database's default: the jobs that take a lock and
    // then read what the lock's previous holder committed (the statement import's overlap rule, the
    // reconciliation's acknowledgement) read it only if each statement takes a new snapshot. Under
    // repeatable read an import that waited for another's lock stored the same booking again
    // (test/statements/overlap-isolation.test.ts).
    //
    // TimeZone UTC whatever the server's `timezone` (initdb sets it to the host's zone): SQL that
    // turns a timestamptz into a calendar value without naming a zone computes in the session's,
    // e.g. `now() - interval '7 days'` (http/operator-overview.ts) and `+ make_interval(days => …)`
    // (reconcile/rules/invoice-not-paid-out.ts) span 23 or 25 hours across a DST change in
    // Europe/Berlin, and migration 0012's partition bounds did (test/db/session-time-zone.test.ts).
    //
    // synchronous_commit on whatever the server's: the receiver answers 2xx once its commit returned,
    // and a server set to `off` (or `local`, on a primary with a synchronous standby) returns before
    // the commit is flushed (or on the standby's disk), so a crash then lost deliveries the provider
    // had been told were stored. `on` waits for both; only `remote_apply`, a wait for the standby to
    // apply as well, is given up, and no read of ours goes to a standby. A reparse still sets its
    // own transactions off (ledger-rederive.ts: it rewrites what is already durable).
    connection: {
      application_name: options.applicationName ?? 'bnpl-recon', default_transaction_isolation: 'read committed' as const, TimeZone: 'UTC',
      synchronous_commit: 'on' as const,
    },
    // A documented option of postgres.js that its type declarations lack: every socket with
    // TCP_NODELAY (socket.ts says why).
    socket: noDelaySockets(),
  };
  const parsed = parseDatabaseUrl(url);
  const attrs = parsed?.params.get('target_session_attrs');
  if (parsed && (parsed.hosts.length === 1 || (WRITABLE_SESSION_ATTRS as readonly (string | null | undefined)[]).includes(attrs))) {
    const client = writableHostClient(parsed, settings, options.log);
    return { sql: client.sql, reportReadOnly: client.readOnly, recycle: client.recycle };
  }
  return { sql: postgres(url, settings), reportReadOnly: () => undefined, recycle: () => undefined };
}

export function createSqlClient(url: string, options: SqlClientOptions): Sql {
  return createLedgerClient(url, options).sql;
}

/** Opens the ledger: the server at DATABASE_URL, or an embedded one started under the data dir. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let url = options.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (url === undefined) {
    const access = options.access ?? 'writer';
    const running = access === 'owner' ? undefined : await findRunningEmbedded([options.dataDir, path.join(options.dataDir, 'demo')]);
    if (running) {
      options.log.info({ dataDir: running.dataDir, owner: running.owner, pid: running.ownerPid }, 'DATABASE_URL unset: using the embedded ledger that is running there');
      url = running.url;
    } else {
      let dataDir = options.dataDir;
      if (access === 'reader' && !(await hasEmbeddedLedger(dataDir, options.log))) {
        // A read after the demo stopped reads what the demo left (README's tour), unless the data
        // dir holds a ledger of its own: the demo's is only ever read, never created, here.
        const demoDir = path.join(options.dataDir, 'demo');
        if (!(await hasEmbeddedLedger(demoDir, options.log))) {
          throw new EmbeddedPostgresError(
            `no ledger to read: DATABASE_URL is unset and no embedded ledger exists or runs under ${path.resolve(options.dataDir)} or ${path.resolve(demoDir)} (set DATABASE_URL, or run this while 'bnpl-recon demo' or 'start' runs with the same RECON_DATA_DIR)`,
          );
        }
        options.log.info({ dataDir: demoDir }, "DATABASE_URL unset and no ledger under the data dir: reading the ledger the demo left");
        dataDir = demoDir;
      } else if (access === 'writer' && !(await hasEmbeddedLedger(dataDir, options.log))) {
        const demoDir = path.join(options.dataDir, 'demo');
        if (await hasEmbeddedLedger(demoDir, options.log)) {
          throw new EmbeddedPostgresError(
            `no ledger under ${path.resolve(options.dataDir)}, only the one the demo left under ${path.resolve(demoDir)}: to work on the demo's, run this while the demo runs or with RECON_DATA_DIR=${path.resolve(demoDir)}; to create this directory's own ledger, run 'bnpl-recon migrate' (or 'start') first, or set DATABASE_URL`,
          );
        }
      }
      const server = await startEmbeddedPostgres(dataDir, options.log);
      url = server.url;
      stopEmbedded = server.stop;
    }
  }
  const { sql, reportReadOnly } = createLedgerClient(url, { poolMax: options.poolMax, log: options.log, ...(options.applicationName ? { applicationName: options.applicationName } : {}) });
  return databaseOver(sql, {
    reportReadOnly,
    embedded: stopEmbedded !== undefined,
    ...(stopEmbedded ? { embeddedUrl: url, afterClose: stopEmbedded } : {}),
  });
}
