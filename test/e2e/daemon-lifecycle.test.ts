import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS, NO_FAULTS, startSimulator, type Simulator } from '../../sim/index.js';
import { addMonths, monthStart, partitionName } from '../../src/ledger/partition-months.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli, spawnCli, type CliChild } from './cli.js';
import { ALL_TOPICS, daemonEnv, waitFor } from './harness.js';

/**
 * The real CLI (`bnpl-recon start`) as a child process against the simulator: health, readiness and
 * metrics endpoints, deliveries stored, a graceful SIGTERM, and a second daemon on the same database
 * taking the polling over while the first is stopped. Plus the contract's exit status 2 cases.
 */

const SHUTDOWN_TIMEOUT_MS = 10_000;

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await request(url);
  return { status: res.statusCode, body: await res.body.text() };
}

function sumOf(metrics: string, name: string): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('bnpl-recon start as a process', () => {
  let db: TestDatabase;
  let sim: Simulator;
  const children: CliChild[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('e2e_lifecycle', { poolMax: 2 });
    sim = await startSimulator({ seed: 'e2e-lifecycle', faults: NO_FAULTS, business: { ordersPerDay: 48 } });
  });
  afterAll(async () => {
    for (const c of children) c.kill();
    await sim?.stop();
  });

  const env = (extra: Record<string, string> = {}) =>
    cleanEnv(daemonEnv({ sim, databaseUrl: db.url, graceSeconds: 2, extra: { LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), ...extra } }));

  it('serves health, readiness and metrics, stores deliveries, stops on SIGTERM, and a second daemon takes polling over', { timeout: 120_000 }, async () => {
    // Polls every 2 s, so both daemons compete for the poll lock and the take-over is observable.
    const a = spawnCli(['start'], env({ POLL_SCHEDULE: '*/2 * * * * *' }));
    children.push(a);
    const running = await a.waitForLog('bnpl-recon running');
    const url = String(running.url);
    const metricsUrl = String(running.metrics);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    expect((await get(`${url}/healthz`)).status).toBe(200);
    expect((await get(`${url}/readyz`)).status).toBe(200);

    for (const topic of ALL_TOPICS) sim.register('sandbox', topic, `${url}/webhooks`);
    await sim.advance(12 * HOUR_MS);
    await sim.drain();
    const stats = sim.stats();
    expect(stats.succeeded).toBeGreaterThan(20);
    expect(stats.failed).toBe(0);
    // 2xx is sent only after the commit: every delivery the simulator saw succeed is in the ledger.
    const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where environment = 'sandbox'`;
    expect(stored?.n).toBe(stats.succeeded);

    const metrics = await get(metricsUrl);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('# TYPE bnpl_recon_webhook_deliveries_total counter');
    expect(sumOf(metrics.body, 'bnpl_recon_webhook_deliveries_total')).toBeGreaterThanOrEqual(stats.succeeded);
    // Process metrics carry the project prefix (src/metrics/registry.ts).
    expect(metrics.body).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(metrics.body).toMatch(/^process_resident_memory_bytes \d/m);
    expect(metrics.body).toMatch(/^nodejs_heap_size_used_bytes \d/m);

    const holderA = `:${a.pid}`;
    await waitFor('a complete poll by the first daemon', async () => {
      const rows = await db.sql`select 1 from poll_runs where status = 'complete' and holder like ${`%${holderA}`}`;
      return rows.length > 0 ? true : undefined;
    }, 30_000, 200);

    // The partition job ran at start: the delivery ledger has its months ahead (DELIVERY_PARTITIONS_AHEAD, 3).
    const ahead = partitionName(addMonths(monthStart(new Date()), 3));
    await waitFor(`partition ${ahead} created by the daemon`, async () => {
      const rows = await db.sql`select 1 from pg_inherits i join pg_class c on c.oid = i.inhrelid where c.relname = ${ahead}`;
      return rows.length > 0 ? true : undefined;
    }, 30_000, 200);

    const b = spawnCli(['start'], env({ POLL_SCHEDULE: '*/2 * * * * *' }));
    children.push(b);
    const runningB = await b.waitForLog('bnpl-recon running');
    expect(String(runningB.url)).not.toBe(url);

    a.child.kill('SIGTERM');
    const exit = await Promise.race([
      a.exited,
      new Promise<'deadline'>((resolve) => setTimeout(() => resolve('deadline'), SHUTDOWN_TIMEOUT_MS + 10_000)),
    ]);
    expect(exit).toEqual({ code: 0, signal: null });
    const shutdownLogs = a.logs().filter((l) => l.msg === 'shutting down');
    expect(shutdownLogs).toHaveLength(1);
    expect(shutdownLogs[0]?.reason).toBe('SIGTERM');
    expect(a.logs().some((l) => l.msg === 'shutdown deadline passed; some components did not stop')).toBe(false);
    // Nothing of the first daemon's poll is left running (an aborted run is recorded as such).
    const [left] = await db.sql<{ n: number }[]>`select count(*)::int as n from poll_runs where status = 'running' and holder like ${`%${holderA}`}`;
    expect(left?.n).toBe(0);

    const [stoppedAt] = await db.sql<{ t: string }[]>`select now()::text as t`;
    const holderB = `:${b.pid}`;
    const takeover = await waitFor('a complete poll by the second daemon after the first stopped', async () => {
      const rows = await db.sql<{ id: number; orders: number }[]>`
        select id::int as id, orders from poll_runs
        where status = 'complete' and holder like ${`%${holderB}`} and started_at > ${stoppedAt!.t}::timestamptz
        order by id limit 1`;
      return rows[0];
    }, 30_000, 200);
    expect(takeover.orders).toBe(sim.stats().orders.sandbox);
    expect((await get(`${runningB.url}/readyz`)).status).toBe(200);

    b.child.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  });

  it('start without PROVIDER_BASE_URL exits 2 and names the setting', { timeout: 60_000 }, async () => {
    const result = await runCli(['start'], env({ PROVIDER_BASE_URL: '' }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PROVIDER_BASE_URL');
  });

  it('report discrepancies --format xml exits 2 and names the option', { timeout: 60_000 }, async () => {
    const result = await runCli(['report', 'discrepancies', '--format', 'xml'], env());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--format');
    expect(result.stdout).toBe('');
  });
});
