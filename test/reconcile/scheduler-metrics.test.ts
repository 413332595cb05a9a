import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/daemon/context.js';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startReconcileScheduler } from '../../src/reconcile/scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { at, pollRun, snapshot } from './fixtures.js';
import { testMetrics } from '../helpers/metrics.js';

describe('scheduler and metrics', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
  });

  it('runs passes one at a time on demand, counts them, and reads open discrepancies at scrape time', async () => {
    db = await createTestDatabase('reconcile_scheduler', { poolMax: 4 });
    const log = silentLogger();
    const config = loadConfig({ RECONCILE_SCHEDULE: '0 0 1 1 *', WEBHOOK_GRACE_SECONDS: '60' });
    const ctx: AppContext = { config, log, database: db, ...testMetrics(db), shutdown: new Shutdown(log, 5000) };
    const run = await pollRun(db, at(0));
    await snapshot(db, { order: randomUUID(), state: 'declined', seenAt: at(0), runId: run });

    const scheduler = startReconcileScheduler(ctx);
    // Two at once: serialised in process, so neither is skipped by the advisory lock.
    const [a, b] = await Promise.all([scheduler.runNow(), scheduler.runNow()]);
    expect([a.skipped, b.skipped]).toEqual([false, false]);
    expect([a.opened, b.opened]).toEqual([1, 0]);
    const runs = await db.sql<{ started: number; finished: number }[]>`
      select extract(epoch from started_at)::float8 as started, extract(epoch from finished_at)::float8 as finished
      from reconcile_runs order by id`;
    expect(runs).toHaveLength(2);
    expect(runs[1]!.started).toBeGreaterThanOrEqual(runs[0]!.finished);

    const text = await ctx.registry.metrics();
    expect(text).toContain('bnpl_recon_discrepancies_open{kind="missed_webhook"} 1');
    expect(text).toContain('bnpl_recon_discrepancies_open{kind="orphan_webhook"} 0');
    expect(text).toContain('bnpl_recon_reconcile_passes_total{outcome="complete"} 2');
    expect(text).toContain('bnpl_recon_reconcile_passes_total{outcome="skipped"} 0');
    expect(text).toMatch(/bnpl_recon_reconcile_pass_duration_seconds_count 2/);

    // Changed elsewhere (another replica, an operator): the next scrape sees it.
    await db.sql`update discrepancies set status = 'acknowledged'`;
    expect(await ctx.registry.metrics()).toContain('bnpl_recon_discrepancies_open{kind="missed_webhook"} 0');

    await ctx.shutdown.run('test done');
    await expect(scheduler.runNow()).rejects.toThrow(/stopping/);
  });
});
