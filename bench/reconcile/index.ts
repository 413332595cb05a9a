import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { applyMigrations } from '../../src/ledger/migrate.js';
import { silentLogger } from '../../src/log/logger.js';
import { seedLedger } from './seed.js';
import { BENCH_CONTRACT_TERMS } from './invoice-seed.js';
import { naiveBaseline } from './baseline.js';
import { median } from '../support.js';

export const GRACE_SECONDS = 3600;

function databaseUrlOf(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function freshDatabase(serverUrl: string, label: string): Promise<Database & { name: string; drop(): Promise<void> }> {
  const name = `bench_${label}_${randomBytes(3).toString('hex')}`;
  const admin = createSqlClient(serverUrl, { poolMax: 1 });
  await admin.unsafe(`create database "${name}"`);
  await admin.end({ timeout: 5 });
  const sql = createSqlClient(databaseUrlOf(serverUrl, name), { poolMax: 4 });
  const over = databaseOver(sql);
  const database = {
    ...over,
    name,
    drop: async () => {
      await over.close();
      const dropper = createSqlClient(serverUrl, { poolMax: 1 });
      await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      await dropper.end({ timeout: 5 });
    },
  };
  await applyMigrations(database, silentLogger());
  return database;
}

const FULL_PASSES = 3;
/** The `reconcile-10m` part's scale (issue 26: a full pass in at most 30 s). */
export const TEN_MILLION = 10_000_000;

export interface RunnerReport {
  full: { mode: string; durationMs: number; stepMs: Record<string, number> }[];
  noChange: { mode: string; durationMs: number; stepMs: Record<string, number>; changes: number; invoices?: { judged: boolean; reason: string } };
  newInvoice: { mode: string; durationMs: number; changes: number; invoices?: { judged: boolean; reason: string } };
  startRssMib: number;
  peakRssMib: number;
}

/** The passes run in a child process (bench/reconcile/runner.ts): see there why. */
export function runPasses(databaseUrl: string): Promise<RunnerReport> {
  const child = fork(fileURLToPath(new URL('./runner.ts', import.meta.url)), [], {
    // The contract's terms in both variants, so payout_deduction_mismatch judges (and costs) the same
    // way whether or not the ledger holds payout reports.
    env: { ...process.env, DATABASE_URL: databaseUrl, GRACE_SECONDS: String(GRACE_SECONDS), FULL_PASSES: String(FULL_PASSES), CONTRACT_TERMS: BENCH_CONTRACT_TERMS },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let report: RunnerReport | undefined;
    child.on('message', (m: RunnerReport) => {
      report = m;
    });
    child.on('error', reject);
    child.on('exit', (code) => (report && code === 0 ? resolve(report) : reject(new Error(`reconcile-runner exited with ${code}`))));
  });
}

/** baselineSample 0: no baseline (the invoice-to-cash variant is compared with the plain pass instead). */
async function measureScale(serverUrl: string, orders: number, baselineSample: number, invoiceToCash = false): Promise<Record<string, unknown>> {
  const database = await freshDatabase(serverUrl, `r${orders}${invoiceToCash ? 'i' : ''}`);
  try {
    const t0 = performance.now();
    const shape = await seedLedger(database.sql, orders, GRACE_SECONDS, { invoiceToCash });
    const seedSeconds = (performance.now() - t0) / 1000;
    const passes = await runPasses(databaseUrlOf(serverUrl, database.name));
    const fullMs = median(passes.full.map((p) => p.durationMs));
    const medianRun = passes.full.find((p) => p.durationMs === fullMs) ?? passes.full[0];
    // Every kind found, in the order of the seed's expected counts, then any kind it did not seed.
    const byKind = await database.sql<{ kind: string; n: number }[]>`select kind::text as kind, count(*)::int as n from discrepancies group by kind`;
    const counts: Record<string, number> = Object.fromEntries(Object.keys(shape.expected).map((k) => [k, 0]));
    for (const row of byKind) counts[row.kind] = row.n;
    const fullRuns = {
      orders: shape.orders,
      deliveries: shape.deliveries,
      order_events: shape.orderEvents,
      seed_seconds: Number(seedSeconds.toFixed(1)),
      full_pass_ms: fullMs,
      full_pass_runs_ms: passes.full.map((p) => p.durationMs),
      full_pass_modes: passes.full.map((p) => p.mode),
      no_change_pass_ms: passes.noChange.durationMs,
      no_change_pass_changes: passes.noChange.changes,
      found: counts,
      expected: shape.expected,
      findings_match_seeded_faults: JSON.stringify(counts) === JSON.stringify(shape.expected),
      no_change_pass_mode: passes.noChange.mode,
      full_pass_step_ms: medianRun?.stepMs,
      // Every run's steps, so an outlier shows which rule was slow.
      full_pass_runs_step_ms: passes.full.map((p) => p.stepMs),
      no_change_pass_step_ms: passes.noChange.stepMs,
      no_change_pass_invoices: passes.noChange.invoices,
      // The same incremental pass after one new invoice event: the invoice kinds judged whole again.
      new_invoice_event_pass_ms: passes.newInvoice.durationMs,
      new_invoice_event_pass_changes: passes.newInvoice.changes,
      new_invoice_event_pass_invoices: passes.newInvoice.invoices,
      reconciler_start_rss_mib: passes.startRssMib,
      reconciler_peak_rss_mib: passes.peakRssMib,
    };
    if (baselineSample === 0) return fullRuns;
    const baseline = await naiveBaseline(database, orders, baselineSample, GRACE_SECONDS);
    return {
      ...fullRuns,
      baseline_sample_orders: baseline.sample,
      baseline_ms_per_order: Number(baseline.msPerOrder.toFixed(3)),
      baseline_extrapolated_ms: Math.round(baseline.msPerOrder * orders),
      baseline_over_full_pass_ratio: Number(((baseline.msPerOrder * orders) / Math.max(1, fullMs)).toFixed(1)),
      baseline_over_no_change_pass_ratio: Number(((baseline.msPerOrder * orders) / Math.max(1, passes.noChange.durationMs)).toFixed(1)),
    };
  } finally {
    await database.drop();
  }
}

/**
 * Issue 26's targets, judged at the scale they name: a full pass over 1,000,000 orders in at most
 * 2 s and one with nothing new in at most 0.5 s; 10,000,000 orders in at most 30 s. At another
 * scale (the quick run) they are printed, not judged.
 */
function reconcileTargets(large: number, fullMs: number, noChangeMs: number): Record<string, unknown> {
  const judged = (target: number, value: number, at: number) => ({ target_ms: target, at_orders: at, value_ms: value, met: large === at ? value <= target : 'not judged at this scale' });
  if (large === TEN_MILLION) return { full_pass: judged(30_000, fullMs, TEN_MILLION), note: 'issue 26; growth <= 10x is linear' };
  return {
    full_pass: judged(2_000, fullMs, 1_000_000),
    no_change_pass: judged(500, noChangeMs, 1_000_000),
    note: 'issue 26; growth <= 10x is linear; memory flat: reconciler_peak_rss_mib alike at both scales',
  };
}

/**
 * The reconciliation benchmark (issue 5): a full pass and a no-change pass over a bulk-seeded
 * ledger at two scales (1,000,000 and 100,000 orders; quick: 100,000 and 10,000), against the
 * baseline a user would write by hand: a JavaScript loop over orders issuing per-order queries,
 * timed on a sample and extrapolated. Runs on BENCH_DATABASE_URL or TEST_DATABASE_URL (a server it
 * may create databases on); each scale gets a fresh database, dropped afterwards.
 *
 * Then (issue 24) the same passes over the large scale's orders seeded with what follows each
 * invoice to cash (invoices, factoring, payouts, payout reports, bank credits: invoice-seed.ts),
 * and the growth over the plain pass of the same run. The invoice kinds are judged whole whenever
 * any invoice evidence is new and not at all otherwise (reconcile/invoice-scope.ts): the pass after
 * one new invoice event shows the first, the pass with nothing new the second.
 * `invoices: false` leaves that part out.
 *
 * The full pass is the median of three on the same ledger (cleared in between); growth compares
 * medians. Figures and command: bench/README.md.
 */
export async function runReconcileBench(opts: { quick?: boolean; invoices?: boolean; large?: number } = {}): Promise<Record<string, unknown>> {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('set BENCH_DATABASE_URL or TEST_DATABASE_URL to a Postgres server the benchmark may create databases on');
  const large = opts.large ?? (opts.quick ? 100_000 : 1_000_000);
  const small = large / 10;
  const atSmall = await measureScale(serverUrl, small, 1000);
  const atLarge = await measureScale(serverUrl, large, 2000);
  const fullGrowth = (atLarge.full_pass_ms as number) / Math.max(1, atSmall.full_pass_ms as number);
  const noChangeGrowth = (atLarge.no_change_pass_ms as number) / Math.max(1, atSmall.no_change_pass_ms as number);
  const result: Record<string, unknown> = {
    part: 'reconcile',
    quick: Boolean(opts.quick),
    large: atLarge,
    small: atSmall,
    full_pass_growth_for_10x_orders: Number(fullGrowth.toFixed(2)),
    no_change_pass_growth_for_10x_orders: Number(noChangeGrowth.toFixed(2)),
    targets: reconcileTargets(large, atLarge.full_pass_ms as number, atLarge.no_change_pass_ms as number),
  };
  if (opts.invoices === false) return result;
  const withInvoices = await measureScale(serverUrl, large, 0, true);
  const ratio = (a: unknown, b: unknown) => Number(((a as number) / Math.max(1, b as number)).toFixed(2));
  result.invoice_to_cash = {
    large: withInvoices,
    // with invoices / without, at the same orders in the same run
    full_pass_ratio: ratio(withInvoices.full_pass_ms, atLarge.full_pass_ms),
    no_change_pass_ratio: ratio(withInvoices.no_change_pass_ms, atLarge.no_change_pass_ms),
    new_invoice_event_pass_ratio: ratio(withInvoices.new_invoice_event_pass_ms, atLarge.new_invoice_event_pass_ms),
    peak_rss_ratio: ratio(withInvoices.reconciler_peak_rss_mib, atLarge.reconciler_peak_rss_mib),
    full_pass_added_ms: (withInvoices.full_pass_ms as number) - (atLarge.full_pass_ms as number),
    no_change_pass_added_ms: (withInvoices.no_change_pass_ms as number) - (atLarge.no_change_pass_ms as number),
  };
  return result;
}

const entry = process.argv[1];
if (entry && import.meta.url.endsWith(entry.replace(/^.*\/bench\//, '/bench/'))) {
  const orders = process.argv.find((a) => a.startsWith('--orders='))?.slice('--orders='.length);
  runReconcileBench({ quick: process.argv.includes('--quick'), invoices: !process.argv.includes('--no-invoices'), ...(orders ? { large: Number(orders) } : {}) }).then(
    (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
    (error: unknown) => {
      process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
      process.exitCode = 1;
    },
  );
}
