import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// docs/contract-terms.md: "When a completed payout before the first row's lists another invoice of the same
// order whose report you have not imported, the fee may have been charged there, so that row's fee is not
// judged." The other invoice is read through its own invoice event (its order), not through a report row's
// Doc No, so invoice-scope.ts must not keep the finding standing when that event arrives.

describe('payout_deduction_mismatch: an incremental pass after the order\'s other invoice event arrives', () => {
  it('resolves the fee finding as a full pass does once the earlier paid-out invoice of the order is known', async () => {
    const d = await createTestDatabase('pr_fee_scope_order');
    const order = randomUUID();
    // INV-A (the order's first invoice) was paid out on day 2 by P1, whose report is not imported.
    await payoutEvent(d, { sepa: 'PO2026030200000011', cents: 9_667n, eventTime: day(2), invoices: ['INV-A'] });
    // INV-B, the second invoice, paid out on day 3 by P2; its report shows no fee (charged on INV-A).
    await invoiceEvent(d, { ref: 'INV-B', order, eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-B', receivedAt: day(1) });
    const rows = [invoiceRow({ doc: 'INV-B', order: 'ORD-1', cents: 5_000n, feeCents: 0n })];
    await payoutEvent(d, { sepa: 'PO2026030300000012', cents: transferOf(rows), eventTime: day(3), invoices: ['INV-B'] });
    await importReport(d, rows);
    // imported on day 3 (the test's clock; the import stamps the wall clock)
    await d.sql`update payout_reports set imported_at = ${day(3, '12:00:00')}::timestamptz`;
    await pass(d, at(4));
    // INV-A's invoice webhook is not in the ledger yet: INV-B looks like the order's first row, fee missing.
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.status, f.expected, f.observed])).toEqual([['open', 'fee=30', 'fee=0']]);

    // Day 4, 13:00: INV-A's invoice/created (order O) arrives late. P1 lists it and was completed before P2, so
    // INV-B's fee is no longer judged (the fee may have been charged on INV-A).
    await invoiceEvent(d, { ref: 'INV-A', order, eventTime: day(1), receivedAt: day(4, '13:00:00') });
    await factoringEvent(d, { ref: 'INV-A', receivedAt: day(4, '13:00:01') });
    const summary = await pass(d, at(4, '14:00:00'));
    const incremental = (await findings(d, 'payout_deduction_mismatch')).map((f) => f.status);
    await pass(d, at(4, '14:05:00'), { full: true });
    const full = (await findings(d, 'payout_deduction_mismatch')).map((f) => f.status);
    expect(full).toEqual(['resolved']);
    expect({ incremental, invoices: summary.invoices }).toEqual({ incremental: full, invoices: summary.invoices });
  });
});
