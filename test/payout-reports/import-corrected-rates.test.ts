import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { importReport, invoiceRow, payoutEvent, transferOf } from '../payout-reports/fixtures.js';

// docs/how-it-decides.md, "Payout reports": a corrected report "is refused, naming the line, the file
// stored before and each figure that differs". Rates are stored as micros of a percent (2.9 % ->
// 29000: payout-reports/types.ts), so the figures must be named as percents: 2.9, not 0.029.
describe('a corrected payout report names the rates that differ as percents', () => {
  it('says Discount % 3 against 2.9 and MDR % 3 against 2.9, not 0.03 against 0.029', async () => {
    const d = await createTestDatabase('corrected_rates');
    const sepa = 'PO2026030200000051';
    const first = [invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, rateMicros: 29_000, ref: sepa })];
    await payoutEvent(d, { sepa, cents: transferOf(first), eventTime: '2026-03-02T06:00:00.000000000Z', invoices: ['INV-1'] });
    await importReport(d, first, 'a');
    const corrected = [{ ...first[0]!, discountRateMicros: 30_000, mdrRateMicros: 30_000 }];
    const error = await importReport(d, corrected, 'b').then(() => null, (e: unknown) => e as Error);
    expect(error, 'the corrected report was stored').not.toBeNull();
    expect(error!.message).toContain('Discount % 3 against 2.9');
    expect(error!.message).toContain('MDR % 3 against 2.9');
  });
});
