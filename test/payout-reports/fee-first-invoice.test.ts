import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// TERMS (fixtures.ts): bank_transfer/30 days 2.5 %, fee 30 cents per order, VAT 19 %, EUR.
// provider-merchant-docs.md: "a fixed transaction fee per order (by contract; charged once per order, on its
// first invoice)": the invoice created first, whatever row the report lists first and whichever is paid out first.

describe('payout_deduction_mismatch: the fixed fee is due on the order\'s first invoice by creation', () => {
  it('accepts the fee charged once, on the order\'s first invoice, when the report lists that invoice below the second', async () => {
    const d = await createTestDatabase('pr_fee_row_order');
    const order = randomUUID();
    // INV-1 is the order's first invoice (created day 1), INV-2 its second (created day 2: a partial shipment).
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(2) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(2) });
    // One payout settles both; the export lists INV-2 first (sorted by Doc No descending, or by amount).
    const rows = [
      invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 0n, line: 2 }),
      invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 30n, line: 3 }),
    ];
    await payoutEvent(d, { sepa: 'PO2026030300000001', cents: transferOf(rows), eventTime: day(3), invoices: ['INV-1', 'INV-2'] });
    await importReport(d, rows);
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
  });

  it('accepts the fee on the first invoice paid out after the second, and finds nothing before it is paid out', async () => {
    const d = await createTestDatabase('pr_fee_later_payout');
    const order = randomUUID();
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(2) });
    // INV-1's factoring went to manual review: INV-2 is approved and paid out first, without the fee.
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(2) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(4) });
    const first = [invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 0n })];
    await payoutEvent(d, { sepa: 'PO2026030300000002', cents: transferOf(first), eventTime: day(3), invoices: ['INV-2'] });
    await importReport(d, first, 'a');
    // INV-1 is not paid out yet: the fee is due on it, not on INV-2.
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
    // The provider charges the order's fee on INV-1, paid out on day 5.
    const second = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 30n })];
    await payoutEvent(d, { sepa: 'PO2026030500000003', cents: transferOf(second), eventTime: day(5), invoices: ['INV-1'] });
    await importReport(d, second, 'b');
    await pass(d, at(6));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
  });

  it('still flags the fee charged on the second invoice as well as on the first', async () => {
    const d = await createTestDatabase('pr_fee_twice_by_creation');
    const order = randomUUID();
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    const second = await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(2) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(2) });
    const rows = [
      invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 30n, line: 2 }),
      invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 30n, line: 3 }),
    ];
    await payoutEvent(d, { sepa: 'PO2026030300000004', cents: transferOf(rows), eventTime: day(3), invoices: ['INV-1', 'INV-2'] });
    await importReport(d, rows);
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.entity_id, f.expected, f.observed])).toEqual([[second, 'fee=0', 'fee=30']]);
  });

  it('accepts the fee on exactly one of the order\'s rows of one payout when creation does not decide which is first', async () => {
    const d = await createTestDatabase('pr_fee_once_in_payout');
    const order = randomUUID();
    // Both created at the same instant: their creation does not rank them.
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(1) });
    const rows = [
      invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 5_000n, feeCents: 0n, line: 2 }),
      invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 10_000n, feeCents: 30n, line: 3 }),
    ];
    await payoutEvent(d, { sepa: 'PO2026030300000005', cents: transferOf(rows), eventTime: day(3), invoices: ['INV-1', 'INV-2'] });
    await importReport(d, rows);
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
  });
});
