import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from '../payout-reports/fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// CONTRACT.md, CONTRACT_TERMS: "none: deductions are reported, not judged". A pass that does not judge
// deductions (a one-off `reconcile` from a shell without the daemon's terms file: settings.ts says a
// one-off pass does not adopt CONTRACT_TERMS) has no evidence that a mismatch went away.
describe('payout_deduction_mismatch and a pass without contract terms', () => {
  it('a pass that does not judge deductions leaves the findings standing instead of resolving them', async () => {
    const d = await createTestDatabase('deductions_unjudged');
    await invoiceEvent(d, { ref: 'INV-1', order: '7b0c3c8e-8a7e-4a59-9d57-1d3c5f0b0a01', eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    // The fixed fee charged twice (60 cents where the contract says 30).
    const rows = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, feeCents: 60n })];
    await payoutEvent(d, { sepa: 'PO2026030300000009', cents: transferOf(rows), eventTime: day(3), invoices: ['INV-1'] });
    await importReport(d, rows);
    await pass(d, at(4));
    const before = await findings(d, 'payout_deduction_mismatch');
    expect(before.map((f) => f.status)).toEqual(['open']);

    // Same ledger, same report rows (never replaced); this pass has no CONTRACT_TERMS.
    const summary = await pass(d, at(4, '12:05:00'), { terms: null });
    const after = await findings(d, 'payout_deduction_mismatch');
    expect(after.map((f) => f.status)).toEqual(['open']);
    expect(summary.resolved).toBe(0);
  });
});
