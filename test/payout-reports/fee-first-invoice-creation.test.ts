import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// TERMS (fixtures.ts): fee 30 cents per order. contract-terms.md: "The first invoice is the one created first (its
// `invoice/created` event's time, to the nanosecond) ...; when an invoice row of the order has no invoice/created
// event, the order's rows are taken in payout order". The creation ranked is ledger/invoices.ts invoiceCreation,
// not the invoice facts' created_at (a later event's time standing in, and microseconds).

describe('payout_deduction_mismatch: the order\'s first invoice by its invoice/created event\'s time', () => {
  it('accepts the fee on the first invoice paid out, when its invoice/created was not received and it completed after the second was created', async () => {
    const d = await createTestDatabase('pr_fee_no_created');
    const order = randomUUID();
    // INV-1: the order's first invoice (paid out on day 3 with the fee). Only its invoice/complete (day 20) is in the
    // ledger: created_at falls back to it, which would rank INV-1 after INV-2.
    await invoiceEvent(d, { ref: 'INV-1', order, topic: 'invoice/complete', eventTime: day(20), grossCents: 10_000n });
    // INV-2: the second invoice, created day 5, paid out day 7 without the fee.
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: day(5) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(5) });
    const first = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 30n })];
    await payoutEvent(d, { sepa: 'PO2026030300000031', cents: transferOf(first), eventTime: day(3), invoices: ['INV-1'] });
    await importReport(d, first, 'a');
    const second = [invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 0n })];
    await payoutEvent(d, { sepa: 'PO2026030700000032', cents: transferOf(second), eventTime: day(7), invoices: ['INV-2'] });
    await importReport(d, second, 'b');
    await pass(d, at(21));
    // INV-1's creation unknown: the order in payout order, INV-1 first; the fee charged once, on it.
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.subject, f.expected, f.observed])).toEqual([]);
  });

  it('accepts the fee on the first-created invoice paid out after the second, when they were created within one microsecond', async () => {
    const d = await createTestDatabase('pr_fee_ns_creation');
    const order = randomUUID();
    // provider-api.md: event_time has "fractional seconds (up to nanosecond digits)": 300 ns apart is not a tie.
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: '2026-03-01T06:00:00.000000100Z' });
    await invoiceEvent(d, { ref: 'INV-2', order, eventTime: '2026-03-01T06:00:00.000000400Z' });
    // INV-1 went to manual review: INV-2 is paid out first, without the fee; INV-1 later, with it.
    await factoringEvent(d, { ref: 'INV-2', receivedAt: '2026-03-01T07:00:00Z' });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: '2026-03-04T07:00:00Z' });
    const first = [invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 0n })];
    await payoutEvent(d, { sepa: 'PO2026030300000033', cents: transferOf(first), eventTime: day(3), invoices: ['INV-2'] });
    await importReport(d, first, 'a');
    const second = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 30n })];
    await payoutEvent(d, { sepa: 'PO2026030500000034', cents: transferOf(second), eventTime: day(5), invoices: ['INV-1'] });
    await importReport(d, second, 'b');
    await pass(d, at(6));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
  });
});
