import postgres, { type Sql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';

/**
 * Only one process per environment polls at a time, across replicas sharing the database. The
 * database decides (a session-level advisory lock) rather than any in-process flag: it is held on
 * one reserved connection, so Postgres releases it by itself when that session ends (crash, network
 * loss, pg_terminate_backend) and another replica can take over at its next tick.
 *
 * The holder must notice such a loss too, or two processes would poll at once. A heartbeat asks
 * pg_locks whether *this* backend still holds the lock; asking merely "select 1" is not enough,
 * because the driver transparently reconnects and would answer from a fresh session without the
 * lock. On a failed or negative heartbeat `lost` aborts, and the current run stops.
 *
 * The session is a one-connection client of its own, not `sql.reserve()`: postgres.js 3.4 writes a
 * query for a reserved connection that the server has closed to a null socket and throws from a
 * setImmediate (an uncaught exception, seen in test/poller/scheduler.test.ts), and releasing such a
 * connection hands the dead socket back to the pool. A separate client reconnects cleanly and is
 * simply ended on release.
 */

// "bnpl" + 2/3: beside the migration lock's "bnpl" + 1 (src/ledger/migrate.ts).
const LOCK_KEYS: Record<ProviderEnvironment, bigint> = { sandbox: 0x626e706c_0002n, production: 0x626e706c_0003n };

export interface PollLock {
  /** Aborts when the lock is known to be gone. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export function pollLockKey(environment: ProviderEnvironment): bigint {
  return LOCK_KEYS[environment];
}

/** Returns the lock, or undefined when another session holds it. */
export async function tryAcquirePollLock(
  database: Database,
  environment: ProviderEnvironment,
  log: Logger,
  heartbeatMs: number,
): Promise<PollLock | undefined> {
  const key = pollLockKey(environment).toString();
  const connection = sessionClient(database.sql);
  const end = () => connection.end({ timeout: 2 }).catch(() => undefined);
  let rows: { ok: boolean; pid: number }[];
  try {
    rows = await connection<{ ok: boolean; pid: number }[]>`select pg_try_advisory_lock(${key}::bigint) as ok, pg_backend_pid() as pid`;
  } catch (error) {
    await end();
    throw error;
  }
  if (rows[0]?.ok !== true) {
    await end();
    return undefined;
  }
  const pid = rows[0].pid;
  const controller = new AbortController();
  const markLost = (reason: string, error?: unknown) => {
    if (controller.signal.aborted) return;
    log.warn({ err: error, pid }, `poll lock lost: ${reason}`);
    controller.abort(new Error(`poll lock lost: ${reason}`));
  };
  let beating = false;
  const timer = setInterval(() => {
    if (beating || controller.signal.aborted) return;
    beating = true;
    connection<{ held: boolean }[]>`
      select exists (
        select 1 from pg_locks
        where locktype = 'advisory' and pid = pg_backend_pid() and granted
          and ((classid::bigint << 32) | objid::bigint) = ${key}::bigint and objsubid = 1
      ) as held`
      .then(
        (result) => {
          if (result[0]?.held !== true) markLost('the session no longer holds it');
        },
        (error: unknown) => markLost('its database connection failed', error),
      )
      .finally(() => {
        beating = false;
      });
  }, heartbeatMs);
  timer.unref();
  let releasing: Promise<void> | undefined;
  return {
    lost: controller.signal,
    release() {
      releasing ??= (async () => {
        clearInterval(timer);
        if (!controller.signal.aborted) {
          await connection`select pg_advisory_unlock(${key}::bigint)`.catch((error: unknown) => log.warn({ err: error }, 'poll lock unlock failed'));
        }
        controller.abort(new Error('poll lock released'));
        await end();
      })();
      return releasing;
    },
  };
}

/** A one-connection client to the same server and database as `sql`, with the same settings. */
function sessionClient(sql: Sql): Sql {
  const o = sql.options;
  return postgres({
    host: o.host as unknown as string,
    port: o.port as unknown as number,
    ...(o.path ? { path: o.path } : {}),
    database: o.database,
    user: o.user,
    ...(o.pass ? { pass: o.pass } : {}),
    ssl: o.ssl,
    max: 1,
    connect_timeout: o.connect_timeout,
    // 0 disables both: the lock's session must not be recycled while it is held.
    idle_timeout: 0,
    max_lifetime: 0,
    onnotice: () => {},
    connection: { application_name: String(o.connection.application_name ?? 'bnpl-recon') },
  });
}
