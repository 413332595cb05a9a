import { beforeAll, describe, expect, it } from 'vitest';
import { fetchAll } from '../../src/reports/source.js';
import { ageingSource, invoicesSource } from '../../src/reports/invoices.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { deductionRow, factoringEvent, importCsv, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

let db: TestDatabase;
useTestDatabase('invoices_report', (d) => (db = d));

const uuid = (c: string) => `00000000-0000-4000-8000-00000000000${c}`;
const ORDER = '00000000-0000-4000-8000-0000000000f0';
const NOW = new Date('2026-03-12T12:00:00Z');
let payout: string;

beforeAll(async () => {
  // A: factored 100.00, paid by P1 on 03-03 (report: 2.5 % = 2.50, fixed fee 0.30, VAT 19 % of 2.80 = 0.53), credited 03-04.
  await invoiceEvent(db, { uuid: uuid('a'), ref: 'INV-A', order: ORDER, eventTime: '2026-03-01T06:00:00.000000000Z' });
  await factoringEvent(db, { ref: 'INV-A', cents: 10_000n, receivedAt: '2026-03-01T07:00:00Z' });
  // B: factored 50.00 on 03-02, never paid: 10 days old on 03-12.
  await invoiceEvent(db, { uuid: uuid('b'), ref: 'INV-B', order: ORDER, eventTime: '2026-03-02T06:00:00.000000000Z' });
  await factoringEvent(db, { ref: 'INV-B', cents: 5_000n, receivedAt: '2026-03-02T07:00:00Z' });
  // C: factored 200.00 on 01-01, never paid: 70 days old.
  await invoiceEvent(db, { uuid: uuid('c'), ref: 'INV-C', eventTime: '2026-01-01T06:00:00.000000000Z' });
  await factoringEvent(db, { ref: 'INV-C', cents: 20_000n, receivedAt: '2026-01-01T07:00:00Z' });
  // D: factoring pending, 10.00, 2 days old.
  await invoiceEvent(db, { uuid: uuid('d'), ref: 'INV-D', eventTime: '2026-03-10T06:00:00.000000000Z' });
  await factoringEvent(db, { ref: 'INV-D', topic: 'factoring/pending', cents: 1_000n, receivedAt: '2026-03-10T07:00:00Z' });
  // E: canceled: in the report, not in the ageing.
  await invoiceEvent(db, { uuid: uuid('e'), ref: 'INV-E', eventTime: '2026-03-05T06:00:00.000000000Z' });
  await invoiceEvent(db, { uuid: uuid('e'), ref: 'INV-E', topic: 'invoice/canceled', eventTime: '2026-03-06T06:00:00.000000000Z' });
  await factoringEvent(db, { ref: 'INV-E', cents: 700n, receivedAt: '2026-03-05T07:00:00Z' });
  const rows = [invoiceRow({ doc: 'INV-A', order: 'O-1', cents: 10_000n }), deductionRow({ doc: 'CN-1', type: 'credit_note', cents: 500n })];
  payout = await payoutEvent(db, { sepa: 'PO2026030300000001', cents: transferOf(rows), eventTime: '2026-03-03T06:00:00.000000000Z', invoices: ['INV-A'] });
  await importReport(db, rows);
  await importCsv(db, [{ ref: 'K1', date: '2026-03-04', cents: 9_167n, sepa: 'PO2026030300000001' }]);
  await pass(db, NOW); // opens invoice_not_paid_out for B and C (factored more than 7 days ago)
});

describe('report invoices', () => {
  it('equals the hand computation, invoice by invoice', async () => {
    const rows = await fetchAll(invoicesSource(db, { environment: 'sandbox' }), undefined, 100);
    const none = { payout_uuid: null, payout_sepa_reference: null, payout_date: null, payouts: '0', deductions_cents: null, deductions: null, net_cents: null, net: null, bank_credit_date: null, days_to_cash: null };
    expect(rows).toEqual([
      {
        invoice_uuid: uuid('a'), reference: 'INV-A', order_uuid: ORDER, invoice_date: '2026-03-01T06:00:00Z', amount_cents: '10000', amount: '100.00',
        currency: 'EUR', factoring_state: 'approved', canceled: 'false', payout_uuid: payout, payout_sepa_reference: 'PO2026030300000001',
        payout_date: '2026-03-03T06:00:00Z', payouts: '1',
        deductions_cents: '333', deductions: '3.33', // 250 + 30 + 53
        net_cents: '9667', net: '96.67', // 10,000 - 333
        bank_credit_date: '2026-03-04', days_to_cash: '3', open_findings: '0',
      },
      { invoice_uuid: uuid('b'), reference: 'INV-B', order_uuid: ORDER, invoice_date: '2026-03-02T06:00:00Z', amount_cents: '5000', amount: '50.00', currency: 'EUR', factoring_state: 'approved', canceled: 'false', ...none, open_findings: '1' },
      { invoice_uuid: uuid('c'), reference: 'INV-C', order_uuid: null, invoice_date: '2026-01-01T06:00:00Z', amount_cents: '20000', amount: '200.00', currency: 'EUR', factoring_state: 'approved', canceled: 'false', ...none, open_findings: '1' },
      { invoice_uuid: uuid('d'), reference: 'INV-D', order_uuid: null, invoice_date: '2026-03-10T06:00:00Z', amount_cents: '1000', amount: '10.00', currency: 'EUR', factoring_state: 'pending', canceled: 'false', ...none, open_findings: '0' },
      { invoice_uuid: uuid('e'), reference: 'INV-E', order_uuid: null, invoice_date: '2026-03-05T06:00:00Z', amount_cents: '700', amount: '7.00', currency: 'EUR', factoring_state: 'approved', canceled: 'true', ...none, open_findings: '0' },
    ]);
  });

  it('--ageing: the invoices not yet paid out by days since the invoice date, every bucket present', async () => {
    const rows = await fetchAll(ageingSource(db, { environment: 'sandbox', now: NOW }), undefined, 100);
    expect(rows).toEqual([
      { bucket: '0-7', invoices: '1', amount_cents: '1000', amount: '10.00', currency: 'EUR' }, // D, 2 days
      { bucket: '8-30', invoices: '1', amount_cents: '5000', amount: '50.00', currency: 'EUR' }, // B, 10 days
      { bucket: '31-60', invoices: '0', amount_cents: '0', amount: '0.00', currency: 'EUR' },
      { bucket: 'over 60', invoices: '1', amount_cents: '20000', amount: '200.00', currency: 'EUR' }, // C, 70 days
    ]);
  });
});

describe('report invoices --ageing: invoices dated after now', () => {
  it('counts an invoice dated later than `now` as 0 days old, so every waiting invoice is in a bucket', async () => {
    // On 03-09 D (dated 03-10) is a day in the future; B is 7 days old, C 67.
    const rows = await fetchAll(ageingSource(db, { environment: 'sandbox', now: new Date('2026-03-09T12:00:00Z') }), undefined, 100);
    expect(rows).toEqual([
      { bucket: '0-7', invoices: '2', amount_cents: '6000', amount: '60.00', currency: 'EUR' }, // B and D
      { bucket: '8-30', invoices: '0', amount_cents: '0', amount: '0.00', currency: 'EUR' },
      { bucket: '31-60', invoices: '0', amount_cents: '0', amount: '0.00', currency: 'EUR' },
      { bucket: 'over 60', invoices: '1', amount_cents: '20000', amount: '200.00', currency: 'EUR' }, // C
    ]);
  });
});

describe('report payouts: composition', () => {
  it("shows the report's gross, fee, VAT, credit notes and net beside the event's amount and the bank credit", async () => {
    const rows = await fetchAll(payoutsSource(db, { environment: 'sandbox' }), undefined, 100);
    expect(rows).toHaveLength(1);
    expect(rows![0]).toMatchObject({
      amount_cents: '9167', credited_cents: '9167',
      report_gross_cents: '10000', report_fee_cents: '280', report_vat_cents: '53', report_credit_notes_cents: '500',
      report_buyer_payments_cents: '0', report_other_deductions_cents: '0', report_net_cents: '9167', report_net: '91.67',
    });
  });
});

describe('metrics', () => {
  it('money in transit and what the reports kept back, as the pass recorded them', async () => {
    const { registry } = testMetrics(db);
    const text = await registry.metrics();
    // B (50.00) and C (200.00): factored, not canceled, no completed payout lists them; A paid, D pending, E canceled.
    expect(text).toContain('bnpl_recon_invoices_in_transit 2\n');
    expect(text).toContain('bnpl_recon_invoices_in_transit_cents 25000\n');
    for (const [part, cents] of [['discount', 250], ['fixed_fee', 30], ['vat', 53], ['credit_notes', 500], ['buyer_payments', 0], ['disputes', 0]]) {
      expect(text).toContain(`bnpl_recon_payout_deductions_cents{part="${part}",currency="EUR"} ${cents}\n`);
    }
    expect(text).toContain('bnpl_recon_discrepancies_open{kind="invoice_not_paid_out"} 2\n');
  });

  it("shows the latest pass's figures: an invoice factored since appears after the next pass", async () => {
    // Received after the previous pass began, as every new event is: a pass recomputes what those touch alone.
    await invoiceEvent(db, { uuid: uuid('f'), ref: 'INV-F', eventTime: '2026-03-11T06:00:00.000000000Z', receivedAt: NOW.toISOString() });
    await factoringEvent(db, { ref: 'INV-F', cents: 3_000n, receivedAt: NOW.toISOString() });
    const { registry } = testMetrics(db);
    expect(await registry.metrics()).toContain('bnpl_recon_invoices_in_transit 2\n');
    await pass(db, NOW);
    const text = await registry.metrics();
    expect(text).toContain('bnpl_recon_invoices_in_transit 3\n');
    expect(text).toContain('bnpl_recon_invoices_in_transit_cents 28000\n');
  });
});

describe('metrics before any pass', () => {
  let fresh: TestDatabase;
  useTestDatabase('invoices_metrics_fresh', (d) => (fresh = d));

  it('reads 0 in transit and no deductions until a pass recorded them', async () => {
    await invoiceEvent(fresh, { ref: 'INV-G', eventTime: '2026-03-11T06:00:00.000000000Z' });
    await factoringEvent(fresh, { ref: 'INV-G', cents: 3_000n, receivedAt: '2026-03-11T07:00:00Z' });
    const { registry } = testMetrics(fresh);
    const before = await registry.metrics();
    expect(before).toContain('bnpl_recon_invoices_in_transit 0\n');
    expect(before).not.toMatch(/^bnpl_recon_payout_deductions_cents\{/m);
    await pass(fresh, NOW);
    const after = await registry.metrics();
    expect(after).toContain('bnpl_recon_invoices_in_transit 1\n');
    // Nothing kept back yet: zeros, in EUR when the contract names no currency.
    expect(after).toContain('bnpl_recon_payout_deductions_cents{part="discount",currency="EUR"} 0\n');
  });
});
