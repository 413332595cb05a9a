import { execFile } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
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
 * DATABASE_URL with sslmode=require, against a real server with TLS on: the ledger's connections
 * open their own sockets (src/db/socket.ts), and postgres.js negotiates TLS over them, as a managed
 * Postgres requires.
 */
const bin = postgresServerBin();
if (!bin) console.warn('database TLS test skipped: no Postgres server binaries under /usr/lib/postgresql/*/bin or PG_BIN; .ci/run installs them');

describe.skipIf(!bin)('the ledger over TLS', () => {
  let cluster: PgCluster;
  let dir: string;

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
    cluster = await startPgCluster({ synchronous: false, settings: { ssl: 'on', ssl_cert_file: `'${cert}'`, ssl_key_file: `'${key}'` } });
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
});
