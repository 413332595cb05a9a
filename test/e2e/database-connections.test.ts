import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { postgresUser } from '../../src/db/embedded-access.js';
import { silentLogger } from '../../src/log/logger.js';
import { postgresServerBin, startPgCluster, type PgCluster } from './pg-cluster.js';

const run = promisify(execFile);

/**
 * The ways to reach a real server beside plain TCP, now that the ledger's connections open their
 * own sockets (src/db/socket.ts): TLS (sslmode=require, as a managed Postgres requires), which
 * postgres.js negotiates over them, and a Unix socket (PGHOST a directory, a local server's usual
 * way in).
 */
const bin = postgresServerBin();
if (!bin) console.warn('database connection tests skipped: no Postgres server binaries under /usr/lib/postgresql/*/bin or PG_BIN; .ci/run installs them');

describe.skipIf(!bin)('the ledger over TLS and over a Unix socket', () => {
  let cluster: PgCluster;
  let dir: string;
  let sockets: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bnpl-tls-'));
    await chmod(dir, 0o755);
    const cert = path.join(dir, 'server.crt');
    const key = path.join(dir, 'server.key');
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-keyout', key, '-out', cert]);
    // Postgres reads its key only when no one else may: 0600, owned by the user it runs as.
    await chmod(key, 0o600);
    await chmod(cert, 0o644);
    const who = await postgresUser(silentLogger());
    if (who) for (const file of [key, cert]) await chown(file, who.uid, who.gid);
    sockets = path.join(dir, 'sockets');
    await mkdir(sockets, { mode: 0o755 });
    if (who) await chown(sockets, who.uid, who.gid);
    cluster = await startPgCluster({
      synchronous: false,
      settings: { ssl: 'on', ssl_cert_file: `'${cert}'`, ssl_key_file: `'${key}'`, unix_socket_directories: `'${sockets}'` },
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('connects with sslmode=require, encrypted, and queries', async () => {
    const sql = createSqlClient(`postgres://postgres@localhost:${cluster.primary.port}/postgres?sslmode=require`, { poolMax: 2 });
    try {
      const [row] = await sql<{ ssl: boolean; one: number }[]>`select ssl, 1 as one from pg_stat_ssl where pid = pg_backend_pid()`;
      expect(row).toEqual({ ssl: true, one: 1 });
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it('connects with several hosts and target_session_attrs=read-write over TLS, to the writable one', async () => {
    const url = `postgres://postgres@localhost:${cluster.standby.port},localhost:${cluster.primary.port}/postgres?target_session_attrs=read-write&sslmode=require`;
    const sql = createSqlClient(url, { poolMax: 2 });
    try {
      // The standby answers first and reports itself read-only: the client moves on to the primary.
      let written: { ssl: boolean; recovery: boolean } | undefined;
      for (let attempt = 0; attempt < 50 && !written; attempt += 1) {
        try {
          const [row] = await sql<{ ssl: boolean; recovery: boolean }[]>`
            select s.ssl, pg_is_in_recovery() as recovery from pg_stat_ssl s where s.pid = pg_backend_pid()`;
          if (row && !row.recovery) written = row;
        } catch {
          // a connection of the old client closing under the query: try again
        }
        if (!written) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(written).toEqual({ ssl: true, recovery: false });
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it('connects through a Unix socket when PGHOST names a directory', async () => {
    const saved = { PGHOST: process.env.PGHOST, PGPORT: process.env.PGPORT, PGUSER: process.env.PGUSER };
    process.env.PGHOST = sockets;
    process.env.PGPORT = String(cluster.primary.port);
    process.env.PGUSER = 'postgres';
    // postgres.js reads PGHOST, PGPORT and PGUSER when the client is made, for a URL without a host.
    const sql = createSqlClient('postgres:///postgres', { poolMax: 1 });
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    try {
      // inet_server_addr() is null over a Unix socket.
      const [row] = await sql<{ address: string | null; one: number }[]>`select inet_server_addr()::text as address, 1 as one`;
      expect(row).toEqual({ address: null, one: 1 });
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});
