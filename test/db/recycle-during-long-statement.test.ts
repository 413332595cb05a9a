import { createServer, type Server } from 'node:http';
import type { ReservedSql } from 'postgres';
import { describe, expect, it } from 'vitest';
import { createLedgerClient, databaseOver, type Database } from '../../src/db/database.js';
import { healthRoutes } from '../../src/http/health.js';
import { silentLogger } from '../../src/log/logger.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import type { TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { startProxy } from '../helpers/tcp-proxy.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { GRACE } from '../reconcile/fixtures.js';
import { databasePerTest } from '../reconcile/helpers.js';

/**
 * The pool replacement for a stall (db/writable-host.ts recycle()) against a reconciliation pass
 * whose statements run for seconds, as a full pass's do on a big or slow ledger. Here the pass's
 * statements wait on tables another session holds (pg_sleep would do the same: the server is busy
 * with them and answers nothing meanwhile), and the pool has two connections, both the pass's: the
 * readiness check waits for a connection past its 2 s and asks for new connections, as it does on
 * a daemon whose pool the pass, the poll and the reports fill.
 */
const withDb = databasePerTest('db_recycle_long');

async function readiness(database: Database): Promise<{ probe: () => Promise<number>; close: () => Promise<void> }> {
  const [ready] = healthRoutes(database, { isStopping: () => false, hasSigningSecret: () => true }).filter((r) => r.path === '/readyz');
  const server: Server = createServer((req, res) => void ready!.handler(req as never, res as never, {} as never));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    probe: async () => (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined))?.status ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Holds the tables the pass reads until `release`: the pass's statements run on, waiting. */
async function holdPassTables(db: TestDatabase): Promise<{ release: () => Promise<void> }> {
  const blocker: ReservedSql = await db.sql.reserve();
  await blocker`begin`;
  await blocker`lock table order_events, webhook_deliveries in access exclusive mode`;
  return {
    release: async () => {
      await blocker`rollback`.catch(() => undefined);
      blocker.release();
    },
  };
}

function startPass(database: Database): Promise<unknown> {
  const config = { PROVIDER_ENV: 'sandbox' as const, WEBHOOK_GRACE_SECONDS: GRACE };
  return runReconcilePass({ config, log: silentLogger(), database, metrics: testMetrics(database, 'sandbox').metrics }, undefined, { origin: 'daemon' }).catch((e: unknown) => e);
}

describe('a pool replacement asked for while a reconciliation pass runs long statements', () => {
  it('keeps the connections while the server works on the pass: the pass completes', { timeout: 60_000 }, withDb(async (db) => {
    const client = createLedgerClient(db.url, { poolMax: 2, applicationName: 'recycle-long-slow' });
    const database = databaseOver(client.sql);
    const health = await readiness(database);
    const held = await holdPassTables(db);
    let pass: Promise<unknown> | undefined;
    try {
      pass = startPass(database);
      await waitFor('both of the pass’s transactions to wait on the held tables', async () => {
        const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = 'recycle-long-slow' and wait_event_type = 'Lock'`;
        return row!.n >= 2 ? true : undefined;
      }, 10_000, 20);
      // The stall detector: no connection free for the readiness check within its 2 s.
      expect(await health.probe()).toBe(503);
      // Past the 5 s a replaced client gives its queries (RETIRE_TIMEOUT_S), the server still busy with them.
      await sleep(7_000);
      const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = 'recycle-long-slow' and wait_event_type = 'Lock'`;
      expect(row!.n, 'the pass’s statements were cut under it').toBe(2);
    } finally {
      await held.release();
    }
    const outcome = (await pass) as { skipped?: boolean } | Error;
    expect(outcome instanceof Error ? `failed: ${outcome.message}` : { skipped: outcome.skipped }).toEqual({ skipped: false });
    expect(await health.probe()).toBe(200);
    await health.close();
    await database.close(1);
  }));

  it('still replaces them when they went silent (half-open after a failover): readiness answers 200 again within 30 s', { timeout: 90_000 }, withDb(async (db) => {
    const proxy = await startProxy(new URL(db.url));
    const client = createLedgerClient(proxy.url, { poolMax: 2, applicationName: 'recycle-long-silent' });
    const database = databaseOver(client.sql, { closeTimeoutSeconds: 1 });
    const health = await readiness(database);
    const held = await holdPassTables(db);
    let pass: Promise<unknown> | undefined;
    try {
      pass = startPass(database);
      await waitFor('both of the pass’s transactions to wait on the held tables', async () => {
        const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = 'recycle-long-silent' and wait_event_type = 'Lock'`;
        return row!.n >= 2 ? true : undefined;
      }, 10_000, 20);
      // Every open connection goes silent (the pass's, its lock session's); new ones are answered.
      proxy.blackhole();
      const answers: number[] = [];
      let recovered = false;
      const until = Date.now() + 30_000;
      while (Date.now() < until && !recovered) {
        const status = await health.probe();
        answers.push(status);
        recovered = status === 200;
        if (!recovered) await sleep(500);
      }
      expect(recovered, `readiness never recovered within 30 s: ${answers.join(',')}`).toBe(true);
    } finally {
      await held.release();
      await pass;
      await health.close();
      await database.close(1);
      await proxy.close();
    }
  }));
});
