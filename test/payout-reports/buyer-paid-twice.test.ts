import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { deductionRow, findings, importCsv, importReport, invoiceEvent, invoiceRow, OTHER_IBAN, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// provider-merchant-docs.md: "Buyers sometimes pay the merchant instead of the provider. The merchant must tell
// the provider; the amount is then deducted from a later payout (the report's buyer payment rows)."
// A deduction of the first payment (50.00) does not deduct a second one made after it.

describe('buyer_paid_merchant_directly: a second direct payment of an invoice', () => {
  it('flags a direct payment made after the provider already deducted an earlier one of the same invoice', async () => {
    const d = await createTestDatabase('pr_buyer_paid_twice');
    await invoiceEvent(d, { ref: 'INV-000777', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-000778', eventTime: day(1) });
    // Day 3: the buyer pays half of INV-000777 (50.00) to the merchant directly.
    await importCsv(d, [{ ref: 'D1', date: '2026-03-03', cents: 5_000n, sepa: 'INV-000777', iban: OTHER_IBAN }], 'a.csv');
    // Day 5: the merchant told the provider; payout P1 deducts 50.00 as a buyer payment.
    const rows = [invoiceRow({ doc: 'INV-000778', cents: 60_000n }), deductionRow({ doc: 'INV-000777', type: 'buyer_payment', cents: 5_000n })];
    await payoutEvent(d, { sepa: 'PO2026030500000061', cents: transferOf(rows), eventTime: day(5), invoices: ['INV-000778'] });
    await importReport(d, rows.map((r) => ({ ...r, payoutReference: 'PO2026030500000061' })));
    // Day 10: the buyer pays the other half (50.00) to the merchant directly again. Nobody deducted it.
    await importCsv(d, [{ ref: 'D2', date: '2026-03-10', cents: 5_000n, sepa: 'INV-000777', iban: OTHER_IBAN }], 'b.csv');
    await pass(d, at(11));
    const open = (await findings(d, 'buyer_paid_merchant_directly')).filter((f) => f.status === 'open').map((f) => [f.entity_id, f.observed]);
    expect(open).toEqual([['D2', '5000']]);
    // Day 12: a later payout deducts the second half too: every direct payment is covered.
    const later = [invoiceRow({ doc: 'INV-000779', cents: 60_000n }), deductionRow({ doc: 'INV-000777', type: 'buyer_payment', cents: 5_000n })];
    await invoiceEvent(d, { ref: 'INV-000779', eventTime: day(1) });
    await payoutEvent(d, { sepa: 'PO2026031200000062', cents: transferOf(later), eventTime: day(12), invoices: ['INV-000779'] });
    await importReport(d, later.map((r) => ({ ...r, payoutReference: 'PO2026031200000062' })));
    await pass(d, at(13));
    expect((await findings(d, 'buyer_paid_merchant_directly')).map((f) => [f.entity_id, f.status])).toEqual([['D2', 'resolved']]);
  });

  it('counts a credit naming two invoices as deducted by any deduction of each: its share of either is unknown', async () => {
    const d = await createTestDatabase('pr_buyer_paid_two_invoices');
    await invoiceEvent(d, { ref: 'INV-000881', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-000882', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-000883', eventTime: day(1) });
    // One transfer of 200.00 paying both invoices; the provider deducts 100.00 of each.
    await importCsv(d, [{ ref: 'D3', date: '2026-03-03', cents: 20_000n, sepa: 'INV-000881 INV-000882', iban: OTHER_IBAN }], 'c.csv');
    const rows = [
      invoiceRow({ doc: 'INV-000883', cents: 60_000n }),
      deductionRow({ doc: 'INV-000881', type: 'buyer_payment', cents: 10_000n, line: 3 }),
      deductionRow({ doc: 'INV-000882', type: 'buyer_payment', cents: 10_000n, line: 4 }),
    ];
    await payoutEvent(d, { sepa: 'PO2026030500000063', cents: transferOf(rows), eventTime: day(5), invoices: ['INV-000883'] });
    await importReport(d, rows.map((r) => ({ ...r, payoutReference: 'PO2026030500000063' })));
    await pass(d, at(6));
    expect(await findings(d, 'buyer_paid_merchant_directly')).toEqual([]);
  });
});
