import { describe, expect, it } from 'vitest';
import { fetchAll } from '../../src/reports/source.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { createTestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { deductionRow, factoringEvent, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

/**
 * docs/reports.md: "gross − fee − VAT − credit notes − buyer payments − other deductions = net when
 * the report adds up". A credit note that refunds its share of the invoice's fee carries a negative
 * Discount and VAT; what it takes off is its Transfer Amount, so its VAT is not counted again in VAT.
 */
describe('a payout whose credit note refunds its share of the fee', () => {
  it('keeps the composition adding up to the net, in the payouts report and in the metrics', async () => {
    const db = await createTestDatabase('pr_composition');
    await invoiceEvent(db, { ref: 'INV-A', order: '00000000-0000-4000-8000-0000000000a1', eventTime: '2026-03-01T06:00:00.000000000Z' });
    await factoringEvent(db, { ref: 'INV-A', cents: 10_000n, receivedAt: '2026-03-01T07:00:00Z' });
    // The credit note takes 20.00 off, less its 2.5 % of fee (0.50) and that fee's VAT (0.10): 19.40.
    const credit = { ...deductionRow({ doc: 'CN-1', type: 'credit_note', cents: 2_000n }), discountCents: -50n, vatOnDiscountCents: -10n, totalDeductionsCents: -60n, transferAmountCents: -1_940n };
    const rows = [invoiceRow({ doc: 'INV-A', order: 'O-1', cents: 10_000n }), credit];
    await payoutEvent(db, { sepa: 'PO2026030300000009', cents: transferOf(rows), eventTime: '2026-03-03T06:00:00.000000000Z', invoices: ['INV-A'] });
    await importReport(db, rows);
    await pass(db, new Date('2026-03-04T12:00:00Z'));

    const [row] = (await fetchAll(payoutsSource(db, { environment: 'sandbox' }), undefined, 10))!;
    const cents = (column: string) => BigInt(String(row![column]));
    expect(row).toMatchObject({ report_vat_cents: '53', report_credit_notes_cents: '1940', report_net_cents: '7727' });
    expect(cents('report_gross_cents') - cents('report_fee_cents') - cents('report_vat_cents') - cents('report_credit_notes_cents')
      - cents('report_buyer_payments_cents') - cents('report_other_deductions_cents')).toBe(cents('report_net_cents'));

    const text = await testMetrics(db).registry.metrics();
    expect(text).toContain('bnpl_recon_payout_deductions_cents{part="vat",currency="EUR"} 53\n');
    expect(text).toContain('bnpl_recon_payout_deductions_cents{part="credit_notes",currency="EUR"} 1940\n');
  });
});
