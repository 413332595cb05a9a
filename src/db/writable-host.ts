import postgres, { type Options, type PostgresType, type Sql } from 'postgres';
import type { Logger } from '../log/logger.js';
import { formatDatabaseUrl, type DatabaseUrl } from './database-url.js';

/** At most one switch of host per this many ms: during a failover no host may accept writes yet. */
const MIN_SWITCH_MS = 1000;

/**
 * A client over several hosts (DATABASE_URL with target_session_attrs=read-write or primary) that
 * ends up on the one that accepts writes, whichever it is now.
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
 * The returned Sql forwards to the current client, so whoever holds it (drizzle, the receiver's
 * writer, the dedicated sessions, which read `options`) follows a switch.
 */
export interface WritableHostClient {
  sql: Sql;
  /** Evidence that the current host refuses writes: switch to the next host (at most once a second). */
  readOnly(reason: string): void;
}

export function writableHostClient(url: DatabaseUrl, settings: Options<Record<string, PostgresType>>, log?: Logger): WritableHostClient {
  const target: DatabaseUrl = { ...url, params: new URLSearchParams(url.params) };
  target.params.delete('target_session_attrs');
  const hosts = target.hosts;
  let offset = 0;
  let lastSwitch = -Infinity;
  let ended = false;
  const retiring = new Set<Promise<void>>();

  const open = (): Sql => {
    const order = [...hosts.slice(offset), ...hosts.slice(0, offset)];
    const client: Sql = postgres(formatDatabaseUrl(target, order), {
      ...settings,
      onparameter: (key, value) => {
        if (client === current && value === 'on' && (key === 'in_hot_standby' || key === 'default_transaction_read_only')) switchHost(`the server reported ${key} = on`);
      },
    });
    return client;
  };
  let current = open();

  const switchHost = (reason: string) => {
    const now = performance.now();
    if (ended || now - lastSwitch < MIN_SWITCH_MS) return;
    lastSwitch = now;
    const old = current;
    offset = (offset + 1) % hosts.length;
    current = open();
    // What callers set on the client (drizzle's own parsers of dates and json) carries over.
    Object.assign(current.options.parsers, old.options.parsers);
    Object.assign(current.options.serializers, old.options.serializers);
    log?.warn({ reason, next: hosts[offset] }, 'the database host refuses writes: connecting again, starting at the next host of DATABASE_URL');
    const ending = old.end({ timeout: 5 }).catch(() => undefined);
    retiring.add(ending);
    void ending.finally(() => retiring.delete(ending));
  };

  const end = async (options?: { timeout?: number }) => {
    ended = true;
    await Promise.all([current.end(options), ...retiring]);
  };
  const sql = new Proxy((() => undefined) as unknown as Sql, {
    apply: (_target, thisArg, args) => Reflect.apply(current as unknown as (...a: unknown[]) => unknown, thisArg, args),
    get: (_target, property) => {
      if (property === 'end') return end;
      const value = Reflect.get(current, property) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
  return { sql, readOnly: (reason) => hosts.length > 1 && switchHost(reason) };
}
