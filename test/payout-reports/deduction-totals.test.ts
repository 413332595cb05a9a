import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// payout-import/metrics.ts: bnpl_recon_payout_deductions_cents{part} is "what the provider kept back";
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
    const [run] = await d.sql<{ totals: Record<string, string> }[]>`
      select invoice_totals as totals from reconcile_runs where invoice_totals is not null order by id desc limit 1`;
    // Only P2 paid the merchant: 2.50 discount, 0.30 fixed fee, 0.53 VAT kept back.
    expect({ discount: run!.totals.discount, fixed_fee: run!.totals.fixed_fee, vat: run!.totals.vat }).toEqual({ discount: '250', fixed_fee: '30', vat: '53' });
  });
});
