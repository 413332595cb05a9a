import { describe, expect, it } from 'vitest';
import { PayoutReportRefusedError } from '../../src/payout-import/import.js';
import { isRefusal } from '../../src/payout-import/file.js';
import { createTestDatabase } from '../helpers/database.js';
import { importReport, invoiceRow, payoutEvent } from './fixtures.js';

// docs/payout-reports.md: rows fitting no payout refuse the file with a message; the reader accepts any
// amount a bigint stores (rows.ts MAX_CENTS), and payout-deduction-mismatch.ts sums "in numeric: a report may
// hold amounts whose sum a bigint cannot". operator-upload.ts answers 422 for a refusal, anything else is a 500.

describe('payout-report import: a file whose Transfer Amounts sum beyond a bigint', () => {
  it('is refused as fitting no payout (a PayoutReportRefusedError), not failed with a database error', async () => {
    const d = await createTestDatabase('pr_import_overflow');
    await payoutEvent(d, { sepa: 'PO2026030200000051', cents: 100n, eventTime: '2026-03-02T06:00:00.000000000Z', invoices: ['INV-1', 'INV-2'] });
    const huge = 5_000_000_000_000_000_000n; // each within a bigint, their sum not
    const row = (doc: string, line: number) => ({
      ...invoiceRow({ doc, cents: 100n, line }),
      transactionAmountCents: huge, grossPurchasePriceCents: huge, discountCents: 0n, transactionFeeCents: 0n, vatOnDiscountCents: 0n,
      totalDeductionsCents: 0n, transferAmountCents: huge,
    });
    const error = await importReport(d, [row('INV-1', 2), row('INV-2', 3)]).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutReportRefusedError);
    expect({ refusal: isRefusal(error), message: (error as Error).message }).toEqual({
      refusal: true,
      message: expect.stringContaining('transfer 10000000000000000000 cents) fit no payout exactly') as unknown,
    });
    expect((await d.sql`select count(*)::int as n from payout_report_rows`)[0]!.n).toBe(0);
  });
});
