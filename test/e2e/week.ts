import { runReconcilePass } from '../../src/reconcile/pass.js';
import { DAY_MS, HOUR_MS, type FaultRates, type GroundTruth } from '../../sim/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { settleDue, startStack, waitFor } from './harness.js';
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
    sim: {
      ...(o.lateWindows ? { graceMs: DAY_MS + 2 * HOUR_MS } : {}),
      ...(o.apiOutageDays ? { apiOutageDays: o.apiOutageDays } : {}),
    },
  });
  try {
    const { sim, daemon } = stack;
    const margin = 0.5;
    const graceElapsed = () => waitForGrace(db, o.graceSeconds + margin);
    for (let day = 0; day < o.days; day++) {
      await sim.advance(DAY_MS);
      if (o.lateWindows) {
        await settleDue(sim);
        await daemon.pollNow();
        await graceElapsed();
        await daemon.reconcileNow();
      } else {
        await sim.drain();
        await daemon.pollNow();
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
    };
  } finally {
    await stack.stop();
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
