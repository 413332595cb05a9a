import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES, DAY_MS, startSimulator, type GroundTruth, type Simulator } from '../../sim/index.js';
import { INVOICE_KINDS, scoreInvoiceKinds, type ReportRow, type RowLedgerFacts } from './score.js';

/**
 * The scoring of issue 24's kinds, on a real ground truth and report rows made from it: the rules
 * that report these kinds are on another branch, so the end-to-end precision test cannot run them
 * yet; this proves the matching itself (kind and entity, the payout as subject of a deduction
 * mismatch, INVOICE_PAYOUT_DAYS for invoices not paid out, the status of a buyer's direct payment).
 */
let sim: Simulator;
let truth: GroundTruth;
beforeAll(async () => {
  sim = await startSimulator({ seed: 'score-24', faults: { ...DEFAULT_FAULT_RATES, payoutReportMismatch: 0.3 }, business: { ordersPerDay: 30 } });
  await sim.advance(12 * DAY_MS);
  truth = sim.groundTruth({ environment: 'sandbox' });
}, 60_000);
afterAll(() => sim.stop());

/** What a correct reconciler would report: one row per ground-truth entry of the new kinds. */
function correctReport(t: GroundTruth): { rows: ReportRow[]; facts: Map<number, RowLedgerFacts> } {
  const rows: ReportRow[] = [];
  const facts = new Map<number, RowLedgerFacts>();
  for (const d of t.discrepancies) {
    if (!(INVOICE_KINDS as readonly string[]).includes(d.kind)) continue;
    const id = rows.length + 1;
    rows.push({
      id, kind: d.kind, status: d.status, environment: d.environment, entity_type: d.entity_type, entity_id: d.entity_id,
      external_reference_id: d.external_reference_id, sepa_reference: d.sepa_reference, expected: d.expected, observed: d.observed, details: '',
      first_detected_at: '', last_checked_at: '', resolved_at: null,
    });
    facts.set(id, { subject: d.subject, eventKey: null, deliveredEntityId: null });
  }
  return { rows, facts };
}

describe('scoring the invoice-to-cash kinds', () => {
  it('a correct report scores 1.0 on every kind, each kind present', () => {
    const { rows, facts } = correctReport(truth);
    const scores = scoreInvoiceKinds(rows, facts, truth, { invoicePayoutDays: 0, judgedAt: new Date(sim.now() + DAY_MS) });
    for (const kind of INVOICE_KINDS) {
      expect(scores[kind].expected, kind).toBeGreaterThan(0);
      expect({ kind, fp: scores[kind].falsePositives, fn: scores[kind].falseNegatives, wrong: scores[kind].wrongDetails }).toEqual({ kind, fp: [], fn: [], wrong: [] });
      expect([scores[kind].precision, scores[kind].recall]).toEqual([1, 1]);
    }
  });

  it('a missed finding lowers recall, an extra one or one on the wrong payout precision, a wrong status is named', () => {
    const { rows, facts } = correctReport(truth);
    const deduction = rows.find((r) => r.kind === 'payout_deduction_mismatch')!;
    facts.set(deduction.id, { subject: 'another-payout', eventKey: null, deliveredEntityId: null });
    const missed = rows.findIndex((r) => r.kind === 'invoice_paid_out_twice');
    rows.splice(missed, 1);
    rows.push({ ...rows.find((r) => r.kind === 'payout_report_mismatch')!, id: 9999, entity_id: 'not-a-payout' });
    const buyer = rows.find((r) => r.kind === 'buyer_paid_merchant_directly')!;
    buyer.status = buyer.status === 'open' ? 'resolved' : 'open';
    const scores = scoreInvoiceKinds(rows, facts, truth, { invoicePayoutDays: 0, judgedAt: new Date(sim.now() + DAY_MS) });
    expect(scores.payout_deduction_mismatch.falsePositives).toHaveLength(1);
    expect(scores.payout_deduction_mismatch.falseNegatives).toHaveLength(1);
    expect(scores.invoice_paid_out_twice.recall).toBeLessThan(1);
    expect(scores.payout_report_mismatch.precision).toBeLessThan(1);
    expect(scores.buyer_paid_merchant_directly.wrongDetails).toHaveLength(1);
  });

  it('an invoice not paid out is required only INVOICE_PAYOUT_DAYS after it became payable; reported earlier it is false', () => {
    const { rows, facts } = correctReport(truth);
    const notPaid = truth.discrepancies.filter((d) => d.kind === 'invoice_not_paid_out');
    const since = notPaid.map((d) => Date.parse(d.payable_since!)).sort((x, y) => x - y);
    // Judged two days after the middle one became payable, with INVOICE_PAYOUT_DAYS=2.
    const judgedAt = new Date(since[Math.floor(since.length / 2)]! + 2 * DAY_MS + 2 * 3_600_000);
    const scores = scoreInvoiceKinds(rows, facts, truth, { invoicePayoutDays: 2, judgedAt });
    const s = scores.invoice_not_paid_out;
    expect(s.expected + s.accepted + s.notYetDue).toBe(notPaid.length);
    expect(s.notYetDue).toBeGreaterThan(0);
    expect(s.falsePositives).toHaveLength(s.notYetDue);
    expect(s.falsePositives.every((f) => f.includes('not yet due'))).toBe(true);
    const due = rows.filter((r) => r.kind !== 'invoice_not_paid_out' || Date.parse(notPaid.find((d) => d.entity_id === r.entity_id)!.payable_since!) + 2 * DAY_MS <= judgedAt.getTime());
    const fair = scoreInvoiceKinds(due, facts, truth, { invoicePayoutDays: 2, judgedAt }).invoice_not_paid_out;
    expect([fair.precision, fair.recall]).toEqual([1, 1]);
  });
});
