import { createServer, connect, type Server, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { silentLogger } from '../../src/log/logger.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { testMetrics } from '../helpers/metrics.js';
import { sleep } from '../helpers/wait.js';
import { GRACE } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('pass_clock');

/**
 * A TCP proxy on loopback to the test server that holds each new connection `delayMs` before
 * joining it to the server: a connection that takes as long to open as one does while a failover
 * settles. What the client sends meanwhile waits in the socket's buffer.
 */
async function delayingProxy(target: URL, delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined).on('close', () => sockets.delete(client));
    setTimeout(() => {
      if (client.destroyed) return;
      const upstream = connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      upstream.on('error', () => client.destroy()).on('close', () => sockets.delete(upstream));
      client.pipe(upstream).pipe(client);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a pass's clock", () => {
  it('is read once the lock is held: a pass whose lock waited for its connection is not dated before the previous holder let go', withDb(async (db) => {
    const proxy = await delayingProxy(new URL(db.url), 800);
    const slow = databaseOver(createSqlClient(proxy.url, { poolMax: 2 }));
    const holder = await db.sql.reserve();
    try {
      // Another replica's pass holds the lock when this one is asked for.
      const key = lockKey('reconcile', 'sandbox').toString();
      await holder`select pg_advisory_lock(${key}::bigint)`;
      const askedAt = Date.now();
      const passing = runReconcilePass({ config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: GRACE }, log: silentLogger(), database: slow, ...testMetrics(slow, 'sandbox') });
      // It lets go while this pass's lock session is still connecting through the proxy.
      await sleep(200);
      const [released] = await holder<{ unlocked: boolean; at_ms: number }[]>`select pg_advisory_unlock(${key}::bigint) as unlocked, extract(epoch from clock_timestamp())::float8 * 1000 as at_ms`;
      expect(released?.unlocked).toBe(true);
      const summary = await passing;
      expect(summary.skipped).toBe(false);
      const [run] = await db.sql<{ started_ms: number; status: string }[]>`select extract(epoch from started_at)::float8 * 1000 as started_ms, status from reconcile_runs where id = ${summary.runId!}`;
      expect(run?.status).toBe('complete');
      // The proxy held the connection 800 ms, so the lock cannot have been taken before then.
      expect(released!.at_ms - askedAt).toBeLessThan(800);
      expect(run!.started_ms).toBeGreaterThanOrEqual(released!.at_ms);
      expect(Date.parse(summary.startedAt)).toBe(Math.round(run!.started_ms));
    } finally {
      holder.release();
      await slow.close();
      await proxy.close();
    }
  }));
});
