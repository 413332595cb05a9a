import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { importPayoutReportFile } from '../../src/payout-import/file.js';
import { importStatementFile } from '../../src/statements/import.js';
import { DAY_MS, DEFAULT_CONTRACT_TERMS, HOUR_MS, type FaultRates, type GroundTruth } from '../../sim/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { settleDue, startStack, waitFor, type Stack } from './harness.js';
import { discrepancyReport, ledgerFacts, stable } from './report.js';
import type { ReportRow, RowLedgerFacts } from './score.js';

export interface WeekOptions {
  label: string;
  seed: string | number;
  faults: Partial<FaultRates>;
  ordersPerDay: number;
  days: number;
  graceSeconds: number;
  /**
   * Let a pass see every late delivery's window: the simulator delays a late delivery by more than a
   * simulated day, each day's deliveries are settled without fast-forwarding, and after each day's
   * poll the test waits out the daemon's (real) grace and runs a pass, so the missed_webhook is
   * flagged before its webhook arrives on a later day and resolved after.
   */
  lateWindows?: boolean;
  /** Simulated days on which the provider's orders API is down while webhooks go on (SimulatorOptions.apiOutageDays). */
  apiOutageDays?: number[];
  /**
   * Issue 24: after the order kinds' final report, import the simulated merchant's bank statement
   * and every payout report, and judge the invoice-to-cash kinds (see WeekInvoices).
   */
  invoices?: {
    /** the daemon's INVOICE_PAYOUT_DAYS */
    payoutDays: number;
    /** how the payout reports are read: the simulator writes each as CSV and XLSX */
    format: 'csv' | 'xlsx';
    /**
     * The judging cut-off, this many simulated days before the end: invoices factored by then are
     * judged, so every one the provider owes has had at least this many daily payout runs to be paid
     * (one run may be cancelled by the provider, its invoices waiting for the next).
     */
    cutoffDaysBeforeEnd: number;
  };
}

/**
 * The invoice-to-cash kinds, judged by a full pass whose clock stands INVOICE_PAYOUT_DAYS after the
 * cut-off. The rules date an invoice's debt by the factoring webhook's arrival (factoring payloads
 * carry no event time), real time here, while the simulator plays a day in a second or so: the
 * cut-off is the last arrival of the cut-off day's deliveries, so the pass judges exactly the
 * invoices factored by the simulated cut-off, as the ground truth's payable_since does.
 */
export interface WeekInvoices {
  rows: ReportRow[];
  facts: Map<number, RowLedgerFacts>;
  /** the simulated cut-off + INVOICE_PAYOUT_DAYS: scoreInvoiceKinds' judgedAt */
  judgedAt: Date;
  /** the pass's clock: the last delivery's arrival by the cut-off + INVOICE_PAYOUT_DAYS */
  passAt: Date;
  statementLines: number;
  payoutReports: number;
  payoutReportRows: number;
}

export interface WeekOutcome {
  db: TestDatabase;
  rows: ReportRow[];
  facts: Map<number, RowLedgerFacts>;
  truth: GroundTruth;
  deliveries: number;
  orders: number;
  /** the report after one more full pass equals the final report (idempotent; incremental == full) */
  stableUnderFullPass: boolean;
  realMs: number;
  invoices?: WeekInvoices;
}

/**
 * One simulated period, driven by the test: each simulated day is played at once (advance), every
 * delivery of it made, retries included (drain, fast-forwarding the simulated clock), then one poll
 * and the pass that follows it. The daemon's grace is real time, so at the end we wait (bounded)
 * until it has passed since the last delivery and the last state the poller saw; then one complete
 * poll (which began after the grace: orphans are provable) and its pass, and a full pass on top.
 */
export async function runWeek(o: WeekOptions): Promise<WeekOutcome> {
  const started = Date.now();
  const db = await createTestDatabase(o.label, { poolMax: 3 });
  const stack = await startStack({
    db, seed: o.seed, faults: o.faults, ordersPerDay: o.ordersPerDay, graceSeconds: o.graceSeconds,
    ...(o.invoices ? { env: { CONTRACT_TERMS: JSON.stringify(DEFAULT_CONTRACT_TERMS), INVOICE_PAYOUT_DAYS: String(o.invoices.payoutDays) } } : {}),
    sim: {
      ...(o.lateWindows ? { graceMs: DAY_MS + 2 * HOUR_MS } : {}),
      ...(o.apiOutageDays ? { apiOutageDays: o.apiOutageDays } : {}),
    },
  });
  try {
    const { sim, daemon } = stack;
    const margin = 0.5;
    const graceElapsed = () => waitForGrace(db, o.graceSeconds + margin);
    let cutoff: { sim: number; real: Date } | undefined;
    const start = sim.now();
    for (let day = 0; day < o.days; day++) {
      await sim.advance(DAY_MS);
      // The business has run to here. Not sim.now(): drain moves the clock on to deliveries planned
      // later, never the business, and advance never moves it back, so after a drain the clock can
      // stand hours past the business (seed e2e-3: 16 h), and an invoice the daemon rightly did not
      // owe yet was judged owed.
      const dayEnd = start + (day + 1) * DAY_MS;
      if (o.lateWindows) {
        await settleDue(sim);
        await daemon.pollNow();
        await graceElapsed();
        await daemon.reconcileNow();
      } else {
        await sim.drain();
        await daemon.pollNow();
      }
      if (o.invoices && day === o.days - 1 - o.invoices.cutoffDaysBeforeEnd) {
        // The business has run to the day's end; every delivery of it has arrived (settled or drained).
        const [last] = await db.sql<{ ms: number | null }[]>`select ceil(extract(epoch from max(received_at)) * 1000)::float8 as ms from webhook_deliveries`;
        if (last?.ms == null) throw new Error('no delivery by the invoice cut-off');
        cutoff = { sim: dayEnd, real: new Date(last.ms) };
      }
    }
    await sim.drain();
    const stats = sim.stats();
    if (stats.pending !== 0 || stats.inFlight !== 0) throw new Error(`simulator not drained: ${JSON.stringify(stats)}`);

    await graceElapsed();
    await daemon.pollNow();
    const [run] = await db.sql<{ status: string }[]>`select status::text as status from poll_runs order by id desc limit 1`;
    if (run?.status !== 'complete') throw new Error(`the final poll run ended ${run?.status}`);
    await daemon.reconcileNow();

    const rows = await discrepancyReport(daemon.ctx.database);
    const facts = await ledgerFacts(daemon.ctx.database);
    const full = await runReconcilePass(daemon.ctx, new Date(), { full: true });
    if (full.skipped) throw new Error('full pass skipped');
    const again = await discrepancyReport(daemon.ctx.database);
    let invoices: WeekInvoices | undefined;
    if (o.invoices) {
      if (!cutoff) throw new Error('the invoice cut-off day is outside the run');
      invoices = await judgeInvoices(stack, o.invoices, cutoff);
    }
    const [counts] = await db.sql<{ deliveries: number; orders: number }[]>`
      select (select count(*) from webhook_deliveries)::int as deliveries, (select count(*) from order_snapshots)::int as orders`;
    return {
      db,
      rows,
      facts,
      truth: sim.groundTruth({ environment: 'sandbox' }),
      deliveries: counts?.deliveries ?? 0,
      orders: counts?.orders ?? 0,
      stableUnderFullPass: JSON.stringify(stable(again)) === JSON.stringify(stable(rows)),
      realMs: Date.now() - started,
      ...(invoices ? { invoices } : {}),
    };
  } finally {
    await stack.stop();
  }
}

/**
 * The merchant's side of invoice to cash: the bank statement (CAMT.053) and every payout report the
 * simulator has published, imported as an accountant would, then one full pass at the cut-off's
 * clock (WeekInvoices).
 */
async function judgeInvoices(
  { sim, daemon }: Pick<Stack, 'sim' | 'daemon'>,
  o: NonNullable<WeekOptions['invoices']>,
  cutoff: { sim: number; real: Date },
): Promise<WeekInvoices> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-week-'));
  try {
    const statements = await sim.writeStatements(dir);
    const camt = statements.find((f) => path.basename(f) === 'sandbox-statement.camt053.xml');
    if (!camt) throw new Error('the simulator wrote no sandbox CAMT.053 statement');
    const statement = await importStatementFile(daemon.ctx.database, 'sandbox', camt);
    const reports = (await sim.writePayoutReports(dir, { format: o.format })).filter((f) => path.basename(f).startsWith('sandbox-'));
    let payoutReportRows = 0;
    for (const file of reports.sort()) {
      const r = await importPayoutReportFile(daemon.ctx.database, 'sandbox', file);
      if (r.alreadyImported) throw new Error(`${file}: imported twice`);
      payoutReportRows += r.rowsNew;
    }
    const passAt = new Date(cutoff.real.getTime() + o.payoutDays * DAY_MS);
    const pass = await runReconcilePass(daemon.ctx, passAt, { full: true });
    if (pass.skipped) throw new Error('invoice pass skipped');
    return {
      rows: await discrepancyReport(daemon.ctx.database),
      facts: await ledgerFacts(daemon.ctx.database),
      judgedAt: new Date(cutoff.sim + o.payoutDays * DAY_MS),
      passAt,
      statementLines: statement.linesNew,
      payoutReports: reports.length,
      payoutReportRows,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bounded wait until the grace has passed since the last delivery and the last state the poller saw. */
async function waitForGrace(db: TestDatabase, seconds: number): Promise<void> {
  await waitFor(
      'the grace period to pass since the last delivery and the last state seen',
      async () => {
        const [r] = await db.sql<{ ok: boolean }[]>`
          select coalesce((select max(received_at) from webhook_deliveries), '-infinity') < now() - make_interval(secs => ${seconds})
             and coalesce((select max(state_since) from order_snapshots), '-infinity') < now() - make_interval(secs => ${seconds})
             and coalesce((select max(observed_at) from order_state_observations), '-infinity') < now() - make_interval(secs => ${seconds})
             as ok`;
        return r?.ok ? true : undefined;
      },
      (seconds + 30) * 1000,
      200,
    );
}
