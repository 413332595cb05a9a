import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// TERMS (fixtures.ts): fee 30 cents per order. docs/contract-terms.md: the first row's fee is not judged when
// "a completed payout before the first row's lists [another invoice of the order] whose report row for it you
// have not imported (the fee may have been charged there)". With that row imported its fee is known: nothing
// may have been charged there that the report does not show.

describe('payout_deduction_mismatch: the order\'s fixed fee never charged, an earlier payout\'s report imported', () => {
  it('flags the first invoice without the fee when the earlier payout\'s report row shows no fee on the other invoice either', async () => {
    const d = await createTestDatabase('pr_fee_never_charged');
    const order = randomUUID();
    // INV-1 is the order's first invoice (created day 1), INV-2 its second (day 2).
    const inv1 = await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(2) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(2) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(4) });
    // INV-2 is paid out first (payout A, day 3) without a fee: right, the fee is due on INV-1.
    const a = [invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 0n })];
    await payoutEvent(d, { sepa: 'PO2026030300000001', cents: transferOf(a), eventTime: day(3), invoices: ['INV-2'] });
    await importReport(d, a, 'a');
    // INV-1 is paid out by payout B (day 5), again without the fee: the order's fee was never charged.
    const b = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 0n })];
    const payoutB = await payoutEvent(d, { sepa: 'PO2026030500000002', cents: transferOf(b), eventTime: day(5), invoices: ['INV-1'] });
    await importReport(d, b, 'b');
    await pass(d, at(6), { full: true });
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.entity_id, f.subject, f.expected, f.observed])).toEqual([
      [inv1, payoutB, 'fee=30', 'fee=0'],
    ]);
  });

  it('does not judge it when the earlier payout\'s imported report has no row for the other invoice (the fee may be on the row not imported)', async () => {
    const d = await createTestDatabase('pr_fee_earlier_row_missing');
    const order = randomUUID();
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(2) });
    await invoiceEvent(d, { ref: 'INV-9', order: randomUUID(), eventTime: day(2) });
    for (const ref of ['INV-1', 'INV-2', 'INV-9']) await factoringEvent(d, { ref, receivedAt: day(2) });
    // Payout A (day 3) lists INV-2 and INV-9 of another order; the file imported for it holds INV-9's row only.
    const a = [invoiceRow({ doc: 'INV-9', order: 'ORD-9', cents: 7_000n, ref: 'PO2026030300000003' })];
    await payoutEvent(d, { sepa: 'PO2026030300000003', cents: 12_000n, eventTime: day(3), invoices: ['INV-2', 'INV-9'] });
    await importReport(d, a, 'a');
    const b = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 0n })];
    await payoutEvent(d, { sepa: 'PO2026030500000004', cents: transferOf(b), eventTime: day(5), invoices: ['INV-1'] });
    await importReport(d, b, 'b');
    await pass(d, at(6), { full: true });
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
  });
});
