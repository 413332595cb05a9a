import { describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES, NO_FAULTS, type FaultRates, type GroundTruth } from '../../sim/index.js';
import { INVOICE_KINDS, SCORED_KINDS, scoreInvoiceKinds, scoreOrderKinds, type InvoiceKindScore, type KindScore, type ReportRow } from './score.js';
import { runWeek } from './week.js';

/**
 * Issue 4 and 5, "How we will know": simulator + daemon + real Postgres over one simulated week with
 * faults on; precision and recall of every order kind against the simulator's ground truth are 1.0,
 * and with faults off there is no discrepancy at all.
 *
 * Ground-truth entries marked timing_dependent (a delivery that arrived after the daemon's grace) are
 * accepted whether reported or not: whether a pass fell inside their window is real-time luck.
 * Duplicate deliveries of an event listed in uncertain_deliveries (an attempt that timed out on the
 * simulator's side, so its retry may be an unplanned duplicate) are accepted too.
 */

// Every order fault several times a week, still leaving most events clean (sum of order rates 0.5).
const ORDER_FAULT_HEAVY: FaultRates = {
  ...DEFAULT_FAULT_RATES,
  neverDelivered: 0.08,
  delayedPastGrace: 0.04,
  reordered: 0.08,
  secondEvent: 0.06,
  wrongSecret: 0.04,
  repeated: 0.08,
  silentOrder: 0.06,
  ghostOrder: 0.06,
};

// Every invoice-to-cash fault on (issue 24), heavier than the defaults so each kind occurs on every
// seed; the payout report mismatch stays at DEFAULT_FAULT_RATES' 0.1, so the payout faults' draws
// (and the duplicate-SEPA pair of e2e-2 checked below) stay those of the order runs.
const INVOICE_FAULTS: Partial<FaultRates> = {
  invoiceNotPaidOut: 0.04,
  invoicePaidOutTwice: 0.04,
  feeOvercharged: 0.05,
  fixedFeeTwice: 0.3,
  canceledInvoicePaid: 0.3,
  buyerPaidDirectly: 0.05,
};
const INVOICE_PAYOUT_DAYS = 1;
const DAYS = 7;
// The invoice cut-off (week.ts): the business up to the end of day DAYS - 1 - this, then the
// merchant's files and one pass INVOICE_PAYOUT_DAYS later.
const CUTOFF_DAYS_BEFORE_END = 2;

const RUNS: { seed: string; faults: FaultRates; name: string; lateWindows?: boolean; requireTimingDependent?: boolean; apiOutageDays?: number[]; reportFormat?: 'csv' | 'xlsx' }[] = [
  { seed: 'e2e-1', faults: { ...DEFAULT_FAULT_RATES, ...INVOICE_FAULTS }, name: 'default rates, invoice faults' },
  { seed: 'e2e-2', faults: { ...ORDER_FAULT_HEAVY, ...INVOICE_FAULTS }, name: 'order-fault-heavy, invoice faults' },
  { seed: 'e2e-3', faults: { ...ORDER_FAULT_HEAVY, ...INVOICE_FAULTS }, name: 'order-fault-heavy, invoice faults', reportFormat: 'xlsx' },
  // A pass inside every late delivery's window (week.ts, lateWindows): the timing-dependent
  // missed_webhooks are then required, and must end resolved as the ground truth says.
  { seed: 'e2e-4', faults: { ...ORDER_FAULT_HEAVY, delayedPastGrace: 0.15 }, name: 'late deliveries, passes inside their window', lateWindows: true },
  // The orders API down for two simulated days while webhooks go on, a pass after each day's grace:
  // the webhooks are newer than the last poll, and no state_mismatch may come of it. (Late
  // deliveries then land before the next successful poll, so they are accepted, not required.)
  { seed: 'e2e-5', faults: ORDER_FAULT_HEAVY, name: 'provider API down on days 2 and 4', lateWindows: true, requireTimingDependent: false, apiOutageDays: [2, 4] },
];

// 60 orders a simulated day: ~400 orders and ~1,800 deliveries a week, which keeps a run near
// 15-25 s on a loaded 2-core machine; enough for every order fault to occur several times per seed.
const ORDERS_PER_DAY = 60;
const GRACE_SECONDS = 2;


function table(seed: string, scores: Record<string, KindScore>): string {
  return Object.values(scores)
    .map((s) => `${seed} ${s.kind.padEnd(18)} expected=${s.expected} tp=${s.truePositives} fp=${s.falsePositives.length} fn=${s.falseNegatives.length} accepted=${s.accepted} precision=${s.precision.toFixed(3)} recall=${s.recall.toFixed(3)}`)
    .join('\n');
}

function invoiceTable(seed: string, scores: Record<string, InvoiceKindScore>): string {
  return Object.values(scores)
    .map((s) => `${seed} ${s.kind.padEnd(28)} expected=${s.expected} tp=${s.truePositives} fp=${s.falsePositives.length} fn=${s.falseNegatives.length} accepted=${s.accepted} notYetDue=${s.notYetDue} precision=${s.precision.toFixed(3)} recall=${s.recall.toFixed(3)}`)
    .join('\n');
}

function breakdown(rows: readonly ReportRow[]): string {
  const n = new Map<string, number>();
  for (const r of rows) n.set(`${r.kind}/${r.entity_type}/${r.status}`, (n.get(`${r.kind}/${r.entity_type}/${r.status}`) ?? 0) + 1);
  return [...n].sort().map(([k, v]) => `${k}=${v}`).join(' ');
}

/** Informational: the payout side of duplicate_event (not in issue 5's order kinds), matched by payout. */
function payoutDuplicates(rows: readonly ReportRow[], truth: GroundTruth): string {
  const reported = rows.filter((r) => r.kind === 'duplicate_event' && r.entity_type === 'payout');
  const expected = truth.discrepancies.filter((d) => d.kind === 'duplicate_event' && d.entity_type === 'payout');
  const entity = new Set(reported.map((r) => r.entity_id));
  const related = expected.filter((d) => d.related_entity_id !== undefined && entity.has(d.related_entity_id)).length;
  const other = new Map<string, { reported: Set<string>; expected: Set<string> }>();
  const slot = (kind: string) => other.get(kind) ?? other.set(kind, { reported: new Set(), expected: new Set() }).get(kind)!;
  for (const r of rows) if (r.entity_type !== 'order' && r.kind !== 'duplicate_delivery' && r.kind !== 'duplicate_event') slot(r.kind).reported.add(r.entity_id);
  for (const d of truth.discrepancies) if (d.entity_type !== 'order' && d.kind !== 'duplicate_delivery' && d.kind !== 'duplicate_event') slot(d.kind).expected.add(d.entity_id);
  const others = [...other].map(([kind, v]) => `${kind} reported=${v.reported.size} expected=${v.expected.size} matched=${[...v.reported].filter((e) => v.expected.has(e)).length}`);
  return `${others.join('; ')}${others.length > 0 ? '; ' : ''}payout duplicate_event reported=${reported.length} expected=${expected.length} same payout=${expected.filter((d) => entity.has(d.entity_id)).length} the ground truth's related (first) payout=${related}`;
}

describe('precision and recall against the simulator ground truth', () => {
  const totals = new Map<string, number>();
  const payoutSepaFindings: { reported: string[]; expected: string[] }[] = [];

  for (const run of RUNS) {
    it(`seed ${run.seed} (${run.name}): every order kind at precision 1 and recall 1`, { timeout: 180_000 }, async () => {
      const week = await runWeek({
        label: `e2e_pr_${run.seed}`, seed: run.seed, faults: run.faults, ordersPerDay: ORDERS_PER_DAY, days: DAYS, graceSeconds: GRACE_SECONDS,
        lateWindows: run.lateWindows ?? false,
        ...(run.apiOutageDays ? { apiOutageDays: run.apiOutageDays } : {}),
        invoices: { payoutDays: INVOICE_PAYOUT_DAYS, format: run.reportFormat ?? 'csv', cutoffDaysBeforeEnd: CUTOFF_DAYS_BEFORE_END },
      });
      const requireTimingDependent = run.requireTimingDependent ?? run.lateWindows ?? false;
      const scores = scoreOrderKinds(week.rows, week.facts, week.truth, { requireTimingDependent });
      if (run.apiOutageDays) {
        const [failedPolls] = await week.db.sql<{ n: number }[]>`select count(*)::int as n from poll_runs where status = 'failed'`;
        console.log(`${run.seed}: ${failedPolls?.n ?? 0} polls failed during the API outage`);
        expect(failedPolls?.n).toBeGreaterThan(0);
      }
      if (requireTimingDependent) {
        const late = week.truth.discrepancies.filter((d) => d.timing_dependent && d.environment === 'sandbox');
        console.log(`${run.seed}: ${late.length} late deliveries in the ground truth, required`);
        expect(late.length).toBeGreaterThan(0);
      }
      console.log(`${table(run.seed, scores)}\n${run.seed}: ${week.orders} orders, ${week.deliveries} deliveries, ${week.rows.length} report rows, ${week.truth.uncertain_deliveries.length} uncertain, ${week.realMs} ms`);
      for (const kind of SCORED_KINDS) if (scores[kind].accepted > 0) console.log(`${run.seed} ${kind} accepted: ${scores[kind].acceptedKeys.join(', ')}`);
      console.log(`${run.seed} rows by kind: ${breakdown(week.rows)}`);
      console.log(`${run.seed} outside the order kinds: ${payoutDuplicates(week.rows, week.truth)}`);
      payoutSepaFindings.push({
        reported: week.rows.filter((r) => r.kind === 'duplicate_event' && r.entity_type === 'payout').map((r) => r.entity_id).sort(),
        expected: week.truth.discrepancies.filter((d) => d.kind === 'duplicate_event' && d.entity_type === 'payout').map((d) => d.entity_id).sort(),
      });
      for (const kind of SCORED_KINDS) totals.set(kind, (totals.get(kind) ?? 0) + scores[kind].expected);

      expect(week.orders).toBeGreaterThan(100);
      for (const kind of SCORED_KINDS) {
        const s = scores[kind];
        expect({ kind, falsePositives: s.falsePositives, falseNegatives: s.falseNegatives, wrongDetails: s.wrongDetails })
          .toEqual({ kind, falsePositives: [], falseNegatives: [], wrongDetails: [] });
        expect(s.precision).toBe(1);
        expect(s.recall).toBe(1);
      }
      // The simulator sends some payout and payment amounts as JSON numbers (its default
      // numericAmounts variant): every one is parsed and applied like a string amount.
      const [forms] = await week.db.sql<{ unparsed: number; numeric: number; numericApplied: number }[]>`
        select count(*) filter (where parse_status <> 'parsed')::int as unparsed,
               count(*) filter (where topic in ('payout/complete', 'payout/cancelled', 'invoice/payment')
                                  and convert_from(raw_body, 'UTF8') ~ '"amount_cents":[0-9]')::int as numeric,
               count(*) filter (where applied and topic in ('payout/complete', 'payout/cancelled', 'invoice/payment')
                                  and convert_from(raw_body, 'UTF8') ~ '"amount_cents":[0-9]')::int as "numericApplied"
        from webhook_deliveries`;
      expect(forms?.unparsed).toBe(0);
      expect(forms?.numeric).toBeGreaterThan(0);
      expect(forms?.numericApplied).toBeGreaterThan(0);
      // The simulator never injects a state mismatch; the reconciler must not invent one.
      expect(week.rows.filter((r) => r.kind === 'state_mismatch')).toEqual([]);
      expect(week.stableUnderFullPass).toBe(true);

      // Issue 24: the invoice-to-cash kinds, after the statement and payout reports are imported.
      const inv = week.invoices!;
      // The statement and every payout report are imported together before the one pass that
      // judges them: a buyer payment the ground truth marks resolved (a completed payout's report
      // already deducts it) was never outstanding at any pass, so no finding may name it. Left out
      // of the truth, a report of one is a false positive.
      const settledBuyerPayments = week.truth.discrepancies.filter((d) => d.kind === 'buyer_paid_merchant_directly' && d.status === 'resolved');
      const invoiceTruth: GroundTruth = { ...week.truth, discrepancies: week.truth.discrepancies.filter((d) => !settledBuyerPayments.includes(d)) };
      const invoiceScores = scoreInvoiceKinds(inv.rows, inv.facts, invoiceTruth, { invoicePayoutDays: INVOICE_PAYOUT_DAYS, judgedAt: inv.judgedAt });
      console.log(`${invoiceTable(run.seed, invoiceScores)}\n${run.seed}: ${inv.statementLines} statement lines, ${inv.payoutReports} payout reports (${run.reportFormat ?? 'csv'}), ${inv.payoutReportRows} rows; ${settledBuyerPayments.length} buyer payments already deducted, not to be flagged; judged at simulated ${inv.judgedAt.toISOString()} (pass clock ${inv.passAt.toISOString()})`);
      for (const kind of INVOICE_KINDS) {
        const s = invoiceScores[kind];
        totals.set(kind, (totals.get(kind) ?? 0) + s.expected);
        expect({ kind, falsePositives: s.falsePositives, falseNegatives: s.falseNegatives, wrongDetails: s.wrongDetails })
          .toEqual({ kind, falsePositives: [], falseNegatives: [], wrongDetails: [] });
        expect(s.precision).toBe(1);
        expect(s.recall).toBe(1);
      }
      // The order kinds stay where they were once the merchant's files are in and the clock moved on.
      const after = scoreOrderKinds(inv.rows, inv.facts, week.truth, { requireTimingDependent });
      for (const kind of SCORED_KINDS) {
        expect({ kind, falsePositives: after[kind].falsePositives, falseNegatives: after[kind].falseNegatives, wrongDetails: after[kind].wrongDetails })
          .toEqual({ kind, falsePositives: [], falseNegatives: [], wrongDetails: [] });
      }
      expect(inv.rows.filter((r) => r.kind === 'state_mismatch')).toEqual([]);
    });
  }

  // Outside issue 5's order kinds, so not part of the 1.0 assertions: the ground truth and the
  // reconciler both name the later payout of a shared SEPA reference. Seed e2e-2 produces one such pair.
  it('payout duplicate_event names the payout the ground truth names', () => {
    expect(payoutSepaFindings.flatMap((f) => f.expected).length).toBeGreaterThan(0);
    for (const f of payoutSepaFindings) expect(f.reported).toEqual(f.expected);
  });

  it('the seeds together exercised every scored kind', () => {
    // Guards against a vacuous 1.0: each kind had findings to find.
    for (const kind of [...SCORED_KINDS, ...INVOICE_KINDS]) expect(totals.get(kind) ?? 0, kind).toBeGreaterThan(0);
  });

  it('with faults off: no discrepancy of any kind', { timeout: 180_000 }, async () => {
    const week = await runWeek({ label: 'e2e_pr_nofaults', seed: 'e2e-clean', faults: NO_FAULTS, ordersPerDay: ORDERS_PER_DAY, days: 7, graceSeconds: GRACE_SECONDS });
    const uncertain = new Set(week.truth.uncertain_deliveries.map((u) => u.event_key));
    console.log(`e2e-clean: ${week.orders} orders, ${week.deliveries} deliveries, ${week.rows.length} report rows, ${uncertain.size} uncertain, ${week.realMs} ms`);
    expect(week.truth.discrepancies).toEqual([]);
    expect(week.orders).toBeGreaterThan(100);
    expect(week.deliveries).toBeGreaterThan(500);
    // Only a retry after an attempt that timed out on the simulator's side may show up (a real duplicate).
    const unexplained = week.rows.filter((r) => !(r.kind === 'duplicate_delivery' && uncertain.has(week.facts.get(r.id)?.eventKey ?? '')));
    expect(unexplained).toEqual([]);
    expect(week.stableUnderFullPass).toBe(true);
  });
});
