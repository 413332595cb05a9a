import { describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { HOUR, MINUTE, realClock } from '../helpers/real-clock.js';
import { importCsv, importReport, invoiceRow, pass, payoutEvent } from '../payout-reports/fixtures.js';

/**
 * payout_amount_mismatch reads the payout's report rows (a report naming another currency than the
 * bank credit makes the amounts incomparable: rules/payout-amount-mismatch.ts), and a report usually
 * comes after the credit. So a payout report imported since the previous pass makes an incremental
 * pass judge the payout kinds (invoice-scope.ts PAYOUT_EVIDENCE_KINDS), and the pass ends where a
 * full pass over the same ledger at the same instant does.
 */
async function statuses(d: TestDatabase, kind: string) {
  return [...await d.sql<{ entity_id: string; status: string }[]>`
    select entity_id, status::text from discrepancies where kind = ${kind} order by entity_id`];
}

describe('an incremental pass after a payout report that follows the bank credit', () => {
  it('payout_amount_mismatch: a report in another currency than the credit resolves the excess, as in a full pass', async () => {
    const d = await createTestDatabase('incr_payout_report');
    const { at, iso, day } = realClock();
    // A GBP 1,000.00 payout, completed five hours ago.
    const payout = await payoutEvent(d, { sepa: 'PO2026120600000001', cents: 100_000n, eventTime: iso(-5 * HOUR) });
    // The bank booked EUR 1,170.00 for it (a conversion): compared as they stand, an excess.
    await importCsv(d, [{ ref: 'B1', date: day(0), cents: 117_000n, sepa: 'PO2026120600000001' }], 'credit.csv');
    // That statement was imported four hours ago (statements are stamped with the database's clock),
    // so the passes below see no new statement.
    await d.sql`update bank_statements set imported_at = imported_at - interval '4 hours'`;
    await d.sql`update statement_lines set imported_at = imported_at - interval '4 hours'`;

    const first = await pass(d, at(-2 * HOUR));
    expect(first.mode).toBe('full');
    expect(await statuses(d, 'payout_amount_mismatch')).toEqual([{ entity_id: payout, status: 'open' }]);

    // Now the payout's report arrives: it is paid in GBP.
    const rows = [invoiceRow({ doc: 'INV-1', cents: 100_000n })].map((r) => ({ ...r, currency: 'GBP' as const, payoutReference: 'PO2026120600000001' }));
    await importReport(d, rows);

    const incremental = await pass(d, at(MINUTE));
    expect(incremental.mode).toBe('incremental');
    const afterIncremental = await statuses(d, 'payout_amount_mismatch');

    const full = await pass(d, at(MINUTE), { full: true });
    expect(full.mode).toBe('full');
    const afterFull = await statuses(d, 'payout_amount_mismatch');
    expect(afterFull).toEqual([{ entity_id: payout, status: 'resolved' }]);
    expect(afterIncremental).toEqual(afterFull);
    expect(incremental.payouts).toEqual({ judged: true, reason: 'a payout report was imported' });

    // Once the report was stored before the previous pass's start less the margin (an hour), the
    // payout kinds stand again: a report judges them for a while, not in every pass.
    const later = await pass(d, at(3 * HOUR));
    expect(later.mode).toBe('incremental');
    expect(later.payouts).toEqual({ judged: true, reason: 'a payout report was imported' });
    const quiet = await pass(d, at(3 * HOUR + MINUTE));
    expect(quiet.mode).toBe('incremental');
    expect(quiet.payouts?.judged).toBe(false);
    expect(await statuses(d, 'payout_amount_mismatch')).toEqual([{ entity_id: payout, status: 'resolved' }]);
  });
});
