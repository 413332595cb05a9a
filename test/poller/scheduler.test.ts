import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/daemon/context.js';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { createProviderClient, type ProviderClient } from '../../src/provider/client.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import type { PollRunSummary } from '../../src/poller/run.js';
import { startPollScheduler, type PollScheduler } from '../../src/poller/scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { FakeProvider } from '../provider/fake-provider.js';
import { TEST_API_KEY, capturingLogger, testConfig } from '../provider/helpers.js';
import { testMetrics } from '../helpers/metrics.js';

let shared: TestDatabase;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  shared = await createTestDatabase('poller_scheduler');
});
afterEach(async (ctx) => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Replica {
  name: string;
  ctx: AppContext;
  client: ProviderClient;
  provider: FakeProvider;
  scheduler: PollScheduler;
  completed: PollRunSummary[];
  logLines: string[];
}

/** One "daemon": its own pool (named, so pg_stat_activity tells them apart), provider client and scheduler. */
async function replica(name: string, schedule: string, orders = 400, hook?: () => Promise<void>): Promise<Replica> {
  const provider = new FakeProvider({ apiKey: TEST_API_KEY, orders, rateLimit: 0 });
  const url = await provider.listen();
  // 10 orders a page at 40 requests/s: a run takes about a second, long enough to act during it.
  const config = testConfig({
    PROVIDER_BASE_URL: url,
    POLL_SCHEDULE: schedule,
    POLL_PAGE_SIZE: 10,
    RATE_LIMIT_RPS: 40,
    POLL_LOCK_HEARTBEAT_MS: 100,
  });
  const sql = createSqlClient(shared.url, { poolMax: 4, applicationName: name });
  const database: Database = databaseOver(sql);
  const { log, lines: logLines } = capturingLogger('info');
  const ctx: AppContext = { config, log, database, ...testMetrics(database), shutdown: new Shutdown(log, 5000) };
  const client = createProviderClient(config, log, ctx.metrics.provider);
  const completed: PollRunSummary[] = [];
  const scheduler = startPollScheduler(ctx, client, async (summary) => {
    completed.push(summary);
    await hook?.();
  });
  cleanups.push(async () => {
    await scheduler.stop();
    await client.close();
    await provider.close();
    await database.close();
  });
  return { name, ctx, client, provider, scheduler, completed, logLines };
}

const NEVER = '0 0 1 1 *'; // ticks driven by the test

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function lockHolder(): Promise<string | undefined> {
  const key = lockKey('poll', 'sandbox');
  const rows = await shared.sql<{ name: string }[]>`
    select a.application_name as name from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1
      -- Advisory locks are per database, but pg_locks lists every database's: other test files'
      -- daemons poll 'sandbox' (the same key) in their own databases.
      and l.database = (select oid from pg_database where datname = current_database())
      and ((l.classid::bigint << 32) | l.objid::bigint) = ${key.toString()}::bigint`;
  return rows[0]?.name;
}

describe('poll scheduler across replicas', () => {
  it('lets one replica poll at a time and hands over when the holder loses its connection or stops', async () => {
    const a = await replica('replica-a', NEVER);
    const b = await replica('replica-b', NEVER);

    // A polls; B, and a second tick of A, are turned away while it does.
    const runA = a.scheduler.tick();
    await waitFor('A to hold the lock', async () => (await lockHolder()) === 'replica-a');
    expect(await b.scheduler.tick()).toBeUndefined();
    expect(await a.scheduler.tick()).toBeUndefined();
    expect(b.provider.stats.requests).toBe(0);
    expect(await a.ctx.registry.getSingleMetric('bnpl_recon_poll_skipped_total')?.get()).toMatchObject({
      values: expect.arrayContaining([expect.objectContaining({ labels: { reason: 'overlap' }, value: 1 })]),
    });

    // A's database session dies mid-run: Postgres drops the lock, A notices and aborts its run.
    await waitFor('A to fetch some pages', () => a.provider.stats.pages > 3);
    await shared.sql`
      select pg_terminate_backend(l.pid) from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and a.application_name = 'replica-a'`;
    // pg_terminate_backend only signals: wait until the server has really dropped the lock.
    await waitFor('the lock to be released', async () => (await lockHolder()) === undefined);
    const runB = b.scheduler.tick();
    const abortedA = await runA;
    expect(abortedA?.status).toBe('aborted');
    expect(abortedA?.error).toMatch(/poll lock lost/);
    const pagesAtAbort = a.provider.stats.pages;

    // B took over and finishes a complete run; A fetched nothing more meanwhile.
    const completeB = await runB;
    expect(completeB?.status).toBe('complete');
    expect(completeB?.orders).toBe(400);
    expect(b.completed.map((s) => s.runId)).toEqual([completeB?.runId]);
    expect(a.provider.stats.pages).toBe(pagesAtAbort);

    // B polls again and stops mid-run: the lock is released and A can poll to completion.
    const runB2 = b.scheduler.tick();
    await waitFor('B to hold the lock', async () => (await lockHolder()) === 'replica-b');
    expect(await a.scheduler.tick()).toBeUndefined();
    await b.scheduler.stop();
    expect((await runB2)?.status).toBe('aborted');
    expect(await lockHolder()).toBeUndefined();
    const completeA = await a.scheduler.tick();
    expect(completeA?.status).toBe('complete');
    expect(a.completed).toHaveLength(1);

    // No two runs of this environment overlapped except the one cut short by the lost connection.
    const overlaps = await shared.sql<{ n: number }[]>`
      select count(*)::int as n from poll_runs x join poll_runs y on x.id < y.id
      where x.environment = 'sandbox' and y.environment = 'sandbox' and x.id <> ${abortedA!.runId} and y.id <> ${abortedA!.runId}
        and tstzrange(x.started_at, x.finished_at) && tstzrange(y.started_at, y.finished_at)`;
    expect(overlaps[0]!.n).toBe(0);
    const snapshots = await shared.sql<{ n: number }[]>`select count(*)::int as n from order_snapshots where environment = 'sandbox'`;
    expect(snapshots[0]!.n).toBe(400);
  });

  it('runNow during a run waits for it and polls again, where a tick is skipped', async () => {
    const r = await replica('replica-d', NEVER, 200);
    const inFlight = r.scheduler.tick();
    await waitFor('the first run to fetch some pages', () => r.provider.stats.pages > 3);
    // Orders added now may be on pages the run in flight already fetched: only a later run must see them.
    r.provider.addOrders(7);
    expect(await r.scheduler.tick()).toBeUndefined();
    const [first, asked, askedAgain] = await Promise.all([inFlight, r.scheduler.runNow(), r.scheduler.runNow()]);
    expect(first?.status).toBe('complete');
    expect(asked?.status).toBe('complete');
    expect(asked?.runId).not.toBe(first?.runId);
    // Callers who asked during the same run share the one queued after it.
    expect(askedAgain?.runId).toBe(asked?.runId);
    expect(asked?.orders).toBe(207);
    const [order] = await shared.sql<{ after: boolean }[]>`
      select b.started_at >= a.finished_at as after from poll_runs a, poll_runs b where a.id = ${first!.runId} and b.id = ${asked!.runId}`;
    expect(order?.after).toBe(true);
  });

  it('logs an after-poll hook refused because it is stopping as that, not as a failure', async () => {
    let hookStarted!: () => void;
    const started = new Promise<void>((resolve) => (hookStarted = resolve));
    let stopRequested!: () => void;
    const stopping = new Promise<void>((resolve) => (stopRequested = resolve));
    const r = await replica('replica-e', NEVER, 20, async () => {
      hookStarted();
      await stopping;
      throw new Error('reconcile is stopping');
    });
    const run = r.scheduler.tick();
    await started;
    const stopped = r.scheduler.stop();
    stopRequested();
    await stopped;
    expect((await run)?.status).toBe('complete');
    const messages = r.logLines.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(messages.filter((m) => m.level >= 50)).toEqual([]);
    expect(messages.map((m) => m.msg)).toContain('after-poll hook not run: stopping');
  });

  it('runs on its cron schedule and marks runs left running by a dead process as aborted', async () => {
    const stale = await shared.sql<{ id: string }[]>`insert into poll_runs (environment, holder) values ('sandbox', 'dead-host:1') returning id::text`;
    const r = await replica('replica-c', '* * * * * *', 30);
    await waitFor('a scheduled run to complete', () => r.completed.length >= 1);
    expect(r.completed[0]?.orders).toBe(30);
    const rows = await shared.sql<{ status: string }[]>`select status::text from poll_runs where id = ${stale[0]!.id}`;
    expect(rows[0]!.status).toBe('aborted');
    await r.scheduler.stop();
    const count = r.completed.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(r.completed.length).toBe(count);
  });
});
