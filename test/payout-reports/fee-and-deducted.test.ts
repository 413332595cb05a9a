import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { deductionRow, factoringEvent, findings, importCsv, importReport, invoiceEvent, invoiceRow, OTHER_IBAN, pass, payoutEvent, transferOf } from '../payout-reports/fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

describe('payout_deduction_mismatch: the order\'s first invoice was paid by a payout whose report was not imported', () => {
  it('does not claim the fixed fee is missing on the order\'s second invoice', async () => {
    const d = await createTestDatabase('pr_fee_unreported');
    const order = randomUUID();
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(3) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(3) });
    // INV-1, the order's first invoice, was paid out on day 2 (the fee was charged there); its report was never imported.
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 9_667n, eventTime: day(2), invoices: ['INV-1'] });
    // INV-2, the order's second invoice, paid on day 4 without the fixed fee, as the contract says.
    const rows = [invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 0n })];
    await payoutEvent(d, { sepa: 'PO2026030400000002', cents: transferOf(rows), eventTime: day(4), invoices: ['INV-2'] });
    await importReport(d, rows);
    await pass(d, at(5));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
  });
});

describe('buyer_paid_merchant_directly: a buyer payment "deducted" in the report of a cancelled payout', () => {
  it('stays open: a cancelled payout deducted nothing', async () => {
    const d = await createTestDatabase('pr_bp_cancelled');
    await invoiceEvent(d, { ref: 'INV-000123', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-000124', eventTime: day(1) });
    await importCsv(d, [{ ref: 'B1', date: '2026-03-03', cents: 11_900n, sepa: 'INV-000123', iban: OTHER_IBAN }]);
    await pass(d, at(4));
    expect((await findings(d, 'buyer_paid_merchant_directly')).map((f) => f.status)).toEqual(['open']);
    // The provider's payout deducting it is cancelled: the merchant was paid nothing, nothing was deducted.
    const rows = [invoiceRow({ doc: 'INV-000124', cents: 60_000n }), deductionRow({ doc: 'INV-000123', type: 'buyer_payment', cents: 11_900n })];
    await payoutEvent(d, { sepa: 'PO2026030500000002', cents: transferOf(rows), eventTime: day(5), invoices: ['INV-000124'], status: 'cancelled' });
    await importReport(d, rows.map((r) => ({ ...r, payoutReference: 'PO2026030500000002' })));
    await pass(d, at(6));
    expect((await findings(d, 'buyer_paid_merchant_directly')).map((f) => f.status)).toEqual(['open']);
  });
});
