/**
 * The growth benchmark (issue 15): do ingest and a reconciliation pass stay within 1.2x of their
 * figures on an empty ledger once the delivery ledger holds a large merchant's year (about
 * 20,000,000 deliveries; `--deliveries N`, quick 1,000,000)?
 *
 * Two databases (BENCH_DATABASE_URL or TEST_DATABASE_URL) seeded with one reconciliation working
 * set (bench/reconcile/seed.ts: 100,000 orders, ~500,000 deliveries; quick 20,000), one of them
 * then given the year (bench/growth/year.ts). Measured on both ("empty": no history, "full"):
 * - ingest: the daemon's receiver in its own process (bench/ingest/target.ts), closed loop at 64
 *   connections, alternating between the two (which goes first alternates too), five rounds (quick
 *   three); judged by the median of the rounds' ratios;
 * - the daemon's pass after each ingest (incremental: it covers the new deliveries), then its pass
 *   with nothing new (the no-change pass), judged likewise;
 * - the first-ever passes (bench/reconcile/runner.ts: median of 3 full, then a no-change pass).
 * Ledger bytes per million deliveries: pg_total_relation_size of every partition (heap, TOAST,
 * indexes) and of webhook_applied_events, over the deliveries stored.
 */
import { once } from 'node:events';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { seedLedger } from '../reconcile/seed.js';
import { GRACE_SECONDS, runPasses } from '../reconcile/index.js';
import { fillYear } from './year.js';
import { makeDeliveries, maxThroughput, startTarget } from '../ingest/index.js';
import { benchDatabase, median, pairedRatios, ratio, type BenchDatabase } from '../support.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { createRegistry } from '../../src/metrics/registry.js';

async function ingestPerSecond(databaseUrl: string, count: number): Promise<{ committedPerSecond: number; runs: number[]; failures: number }> {
  const { url, child } = await startTarget('daemon', databaseUrl);
  try {
    await maxThroughput(url, makeDeliveries(2000), 32); // warm-up: JIT, pool connections, prepared statements
    const runs = [];
    for (let i = 0; i < 3; i += 1) runs.push(await maxThroughput(url, makeDeliveries(count), 64));
    return { committedPerSecond: median(runs.map((r) => r.committedPerSecond)), runs: runs.map((r) => r.committedPerSecond), failures: runs.reduce((s, r) => s + r.failures, 0) };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

async function passes(databaseUrl: string) {
  const report = await runPasses(databaseUrl);
  const fullPassMs = median(report.full.map((p) => p.durationMs));
  return {
    fullPassMs,
    fullPassRunsMs: report.full.map((p) => p.durationMs),
    fullPassStepMs: report.full.find((p) => p.durationMs === fullPassMs)?.stepMs,
    noChangePassMs: report.noChange.durationMs,
    noChangePassStepMs: report.noChange.stepMs,
  };
}

async function ledgerSize(databaseUrl: string) {
  const sql = createSqlClient(databaseUrl, { poolMax: 1 });
  try {
    const [row] = await sql<{ deliveries: string; delivery_bytes: string; claim_bytes: string; partitions: number }[]>`
      select (select count(*) from webhook_deliveries)::text as deliveries,
             (select sum(pg_total_relation_size(inhrelid)) from pg_inherits where inhparent = 'webhook_deliveries'::regclass)::text as delivery_bytes,
             pg_total_relation_size('webhook_applied_events')::text as claim_bytes,
             (select count(*)::int from pg_inherits where inhparent = 'webhook_deliveries'::regclass) as partitions`;
    const deliveries = Number(row!.deliveries);
    const bytes = Number(row!.delivery_bytes) + Number(row!.claim_bytes);
    return { deliveries, partitions: row!.partitions, deliveryBytes: Number(row!.delivery_bytes), appliedEventBytes: Number(row!.claim_bytes), bytesPerMillionDeliveries: Math.round((bytes / deliveries) * 1e6) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The reconciler's own pass, in this process: the daemon's pass after new deliveries (incremental). */
async function passNow(databaseUrl: string): Promise<{ mode: string; durationMs: number; stepMs: Record<string, number> }> {
  const database = databaseOver(createSqlClient(databaseUrl, { poolMax: 4 }));
  try {
    const metrics = createMetrics(createRegistry({ defaultMetrics: false }), database, 'sandbox');
    const summary = await runReconcilePass({ config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: GRACE_SECONDS }, log: silentLogger(), database, metrics });
    return { mode: summary.mode, durationMs: summary.durationMs, stepMs: summary.stepMs };
  } finally {
    await database.close();
  }
}

async function seeded(label: string, orders: number): Promise<BenchDatabase> {
  const db = await benchDatabase(label);
  const sql = createSqlClient(db.url, { poolMax: 2 });
  try {
    await seedLedger(sql, orders, GRACE_SECONDS);
  } finally {
    await sql.end({ timeout: 5 });
  }
  return db;
}

/**
 * Two databases with the same working set, one of them given the year; every measurement is taken
 * on both, alternating (empty, full, empty, full, …), so the load other processes put on a shared
 * machine falls on both alike instead of on whichever was measured second.
 */
export async function runGrowthBench(opts: { quick?: boolean; deliveries?: number } = {}): Promise<Record<string, unknown>> {
  const deliveries = opts.deliveries ?? (opts.quick ? 1_000_000 : 20_000_000);
  const orders = opts.quick ? 20_000 : 100_000;
  const ingestCount = opts.quick ? 10_000 : 30_000;
  const rounds = opts.quick ? 3 : 5;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const empty = await seeded('growth_empty', orders);
  const full = await seeded('growth_full', orders);
  try {
    log(`growth: loading ${deliveries} deliveries`);
    const loadStarted = performance.now();
    const fill = createSqlClient(full.url, { poolMax: 1 });
    try {
      await fillYear(fill, deliveries, log);
    } finally {
      await fill.end({ timeout: 5 });
    }
    const loadSeconds = Math.round((performance.now() - loadStarted) / 1000);
    // First-ever passes (runner: median of 3 full passes, then a no-change pass).
    const emptyPasses = await passes(empty.url);
    const fullPasses = await passes(full.url);
    const ingest: Record<'empty' | 'full', number[]> = { empty: [], full: [] };
    const after: Record<'empty' | 'full', { mode: string; durationMs: number; stepMs: Record<string, number> }[]> = { empty: [], full: [] };
    const idle: Record<'empty' | 'full', { mode: string; durationMs: number; stepMs: Record<string, number> }[]> = { empty: [], full: [] };
    for (let round = 0; round < rounds; round += 1) {
      // Which ledger goes first alternates too, so neither always meets the other's leftovers (caches, autovacuum).
      const order = [['empty', empty], ['full', full]] as const;
      for (const [name, db] of round % 2 === 0 ? order : [...order].reverse()) {
        ingest[name].push((await ingestPerSecond(db.url, ingestCount)).committedPerSecond);
        after[name].push(await passNow(db.url));
        idle[name].push(await passNow(db.url)); // nothing new since the pass before: the daemon's idle pass
      }
      log(`growth: round ${round + 1}/${rounds}: ingest/s empty ${ingest.empty.at(-1)}, full ${ingest.full.at(-1)}`);
    }
    const emptySize = await ledgerSize(empty.url);
    const fullSize = await ledgerSize(full.url);
    const summary = (name: 'empty' | 'full', p: Awaited<ReturnType<typeof passes>>, size: Awaited<ReturnType<typeof ledgerSize>>) => ({
      ingestPerSecond: median(ingest[name]),
      ingestRuns: ingest[name],
      passAfterIngestMs: median(after[name].map((a) => a.durationMs)),
      passAfterIngestRuns: after[name].map((a) => ({ mode: a.mode, ms: a.durationMs, duplicateDeliveryMs: a.stepMs.duplicate_delivery })),
      noChangePassMs: median(idle[name].map((a) => a.durationMs)),
      noChangePassRuns: idle[name].map((a) => ({ mode: a.mode, ms: a.durationMs, stepMs: a.stepMs })),
      firstFullPass: p,
      ledger: size,
    });
    const e = summary('empty', emptyPasses, emptySize);
    const f = summary('full', fullPasses, fullSize);
    const perRound = {
      ingest: pairedRatios(ingest.empty, ingest.full),
      passAfterIngest: pairedRatios(after.full.map((a) => a.durationMs), after.empty.map((a) => a.durationMs)),
      noChangePass: pairedRatios(idle.full.map((a) => a.durationMs), idle.empty.map((a) => a.durationMs)),
    };
    return {
      part: 'growth',
      quick: Boolean(opts.quick),
      description: `two ledgers with the same working set (${orders} orders), one also holding ${deliveries} deliveries over the 12 months before this one; measured alternately: ingest (daemon receiver, 64 connections, ${ingestCount} deliveries, ${rounds} rounds) and the pass after each ingest (incremental) and a pass with nothing new after it, each judged by the median of the rounds' ratios, and once the first-ever passes (median of 3 full, then no change)`,
      yearDeliveries: deliveries,
      workingSetOrders: orders,
      loadSeconds,
      empty: e,
      full: f,
      // Judged per round (the two ledgers measured back to back, under the same load from the rest of
      // the machine), the median of the rounds' ratios; the ratio of the medians beside it.
      ratios: {
        ingest: median(perRound.ingest),
        passAfterIngest: median(perRound.passAfterIngest),
        noChangePass: median(perRound.noChangePass),
        perRound,
        ofMedians: {
          ingest: ratio(e.ingestPerSecond, f.ingestPerSecond),
          passAfterIngest: ratio(f.passAfterIngestMs, e.passAfterIngestMs),
          noChangePass: ratio(f.noChangePassMs, e.noChangePassMs),
        },
        firstNoChangePass: ratio(f.firstFullPass.noChangePassMs, e.firstFullPass.noChangePassMs),
        firstFullPass: ratio(f.firstFullPass.fullPassMs, e.firstFullPass.fullPassMs),
        note: 'above 1: slower with the year in the ledger (ingest: empty/s over full/s; passes: full ms over empty ms). The first full pass records every retry of the year as a duplicate_delivery finding, once per ledger: it grows with the history by design',
      },
      ledgerBytesPerMillionDeliveries: fullSize.bytesPerMillionDeliveries,
      targets: { ratio: 1.2, judged: 'ingest, passAfterIngest, noChangePass' },
    };
  } finally {
    await empty.drop();
    await full.drop();
  }
}
