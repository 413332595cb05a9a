import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { factoringEvent, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// payout-import/metrics.ts: bnpl_recon_payout_deductions_cents{part,currency} is "what the provider kept back";
// docs/how-it-decides.md: "a cancelled payout paid nothing" (and its report "deducted nothing":
// buyer-paid-merchant-directly.ts). The deduction rule and the buyer payment rule read completed payouts' rows only.

describe('invoice totals (bnpl_recon_payout_deductions_cents)', () => {
  it('counts what a cancelled payout\'s report states as kept back once the payout is re-issued: not twice', async () => {
    const d = await createTestDatabase('pr_totals_cancelled');
    await invoiceEvent(d, { ref: 'INV-1', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    const rows = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n })]; // discount 250, fee 30, VAT 53
    // P1 completes, its report is imported, then the provider cancels P1 and pays the invoice again with P2.
    const p1 = randomUUID();
    await payoutEvent(d, { uuid: p1, sepa: 'PO2026030200000021', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-1'] });
    await importReport(d, rows, 'p1');
    await payoutEvent(d, { uuid: p1, status: 'cancelled', sepa: 'PO2026030200000021', cents: transferOf(rows), eventTime: day(3), invoices: ['INV-1'] });
    await payoutEvent(d, { sepa: 'PO2026030400000022', cents: transferOf(rows), eventTime: day(4), invoices: ['INV-1'] });
    await importReport(d, rows, 'p2'); // tied to P2, the completed one
    await pass(d, at(5));
    const [run] = await d.sql<{ totals: { kept: Record<string, Record<string, string>> } }[]>`
      select invoice_totals as totals from reconcile_runs where invoice_totals is not null order by id desc limit 1`;
    // Only P2 paid the merchant: 2.50 discount, 0.30 fixed fee, 0.53 VAT kept back.
    expect(run!.totals.kept).toEqual({ EUR: expect.objectContaining({ discount: '250', fixed_fee: '30', vat: '53' }) });
  });
});

// provider-merchant-docs.md: "Amounts are in the payout's currency (EUR or GBP)"; docs/how-it-decides.md:
// amounts of different currencies are never added. Summed over both, a EUR and a GBP payout's 2.50
// discount each read as one 500 cents, which the dashboard showed as 5.00 euros.
describe('invoice totals of payouts in two currencies', () => {
  it('keeps a GBP payout\'s discount, fee and VAT apart from a EUR payout\'s, in the totals and the metric', async () => {
    const d = await createTestDatabase('pr_totals_currencies');
    for (const ref of ['INV-E', 'INV-G']) {
      await invoiceEvent(d, { ref, order: randomUUID(), eventTime: day(1) });
      await factoringEvent(d, { ref, receivedAt: day(1) });
    }
    // Each: 100.00 at 2.5 % -> discount 2.50, fixed fee 0.30, VAT 0.53.
    const eur = [invoiceRow({ doc: 'INV-E', order: 'ORD-E', cents: 10_000n, ref: 'PO2026030200000031' })];
    const gbp = [{ ...invoiceRow({ doc: 'INV-G', order: 'ORD-G', cents: 20_000n, ref: 'PO2026030200000032' }), currency: 'GBP' as const }];
    await payoutEvent(d, { sepa: 'PO2026030200000031', cents: transferOf(eur), eventTime: day(2), invoices: ['INV-E'] });
    await payoutEvent(d, { sepa: 'PO2026030200000032', cents: transferOf(gbp), eventTime: day(2), invoices: ['INV-G'] });
    await importReport(d, eur, 'eur');
    await importReport(d, gbp, 'gbp');
    await pass(d, at(3), { terms: null });
    const [run] = await d.sql<{ totals: { kept: Record<string, Record<string, string>> } }[]>`
      select invoice_totals as totals from reconcile_runs where invoice_totals is not null order by id desc limit 1`;
    expect(run!.totals.kept).toEqual({
      EUR: { discount: '250', fixed_fee: '30', vat: '53', credit_notes: '0', buyer_payments: '0', disputes: '0' },
      GBP: { discount: '500', fixed_fee: '30', vat: '101', credit_notes: '0', buyer_payments: '0', disputes: '0' },
    });
    const text = await testMetrics(d).registry.metrics();
    expect(text).toContain('bnpl_recon_payout_deductions_cents{part="discount",currency="EUR"} 250\n');
    expect(text).toContain('bnpl_recon_payout_deductions_cents{part="discount",currency="GBP"} 500\n');
    expect(text).not.toMatch(/^bnpl_recon_payout_deductions_cents\{part="discount"\}/m);
  });
});
