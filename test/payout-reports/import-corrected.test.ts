import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { importPayoutReport } from '../../src/payout-import/import.js';
import { readPayoutReport } from '../../src/payout-reports/read.js';
import { invoiceEvent, payoutEvent } from '../payout-reports/fixtures.js';

const day = (d: number) => `2026-03-${String(d).padStart(2, '0')}T06:00:00.000000000Z`;
const csv = (lines: string[]) => new TextEncoder().encode(lines.join('\r\n') + '\r\n');
const HEADER = 'Payout Reference,Order No,Doc No,Doc Type,Transaction Amount,Transaction Fee,Gross Purchase Price,Discount,VAT on Discount,Transfer Amount,Total Deductions';

describe('a second report of a payout whose row for a document says other figures than the stored one', () => {
  it('refuses the file naming the line, the document and the figures that differ, and stores nothing of it', async () => {
    const d = await createTestDatabase('pr_corrected');
    await invoiceEvent(d, { ref: 'INV-1', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', eventTime: day(1) });
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 19_334n, eventTime: day(2), invoices: ['INV-1', 'INV-2'] });
    const first = csv([
      HEADER,
      'PO2026030200000001,ORD-1,INV-1,invoice,100.00,0.30,100.00,2.50,0.53,96.67,3.33',
      'PO2026030200000001,ORD-2,INV-2,invoice,100.00,0.30,100.00,2.50,0.53,96.67,3.33',
    ]);
    const stored = await importPayoutReport(d, 'sandbox', await readPayoutReport(first), { fileName: 'first.csv' });
    expect(stored.rowsNew).toBe(2);

    // The same payout's report again, INV-2's discount and transfer changed: before, the file was
    // recorded with "rows new 0" and its figures dropped without a word.
    const corrected = csv([
      HEADER,
      'PO2026030200000001,ORD-1,INV-1,invoice,100.00,0.30,100.00,2.50,0.53,96.67,3.33',
      'PO2026030200000001,ORD-2,INV-2,invoice,100.00,0.30,100.00,2.90,0.61,96.19,3.81',
    ]);
    const outcome = await importPayoutReport(d, 'sandbox', await readPayoutReport(corrected), { fileName: 'corrected.csv' })
      .then((r) => `stored: rows new ${r.rowsNew}`, (e: Error) => `refused: ${e.name}: ${e.message}`);
    expect(outcome).toMatch(/^refused: PayoutReportRefusedError: /);
    expect(outcome).toContain('line 3');
    expect(outcome).toContain('INV-2');
    expect(outcome).toContain('first.csv');
    expect(outcome).toMatch(/discount 2\.90.*2\.50|discount.*290.*250/i);
    const [reports] = await d.sql<{ n: number }[]>`select count(*)::int as n from payout_reports`;
    expect(reports!.n).toBe(1);
    await d.close();
  });

  it('still stores a second report that repeats the stored rows with the same figures and adds one', async () => {
    const d = await createTestDatabase('pr_corrected_same');
    await invoiceEvent(d, { ref: 'INV-1', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', eventTime: day(1) });
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 19_334n, eventTime: day(2), invoices: ['INV-1', 'INV-2'] });
    const row1 = 'PO2026030200000001,ORD-1,INV-1,invoice,100.00,0.30,100.00,2.50,0.53,96.67,3.33';
    const row2 = 'PO2026030200000001,ORD-2,INV-2,invoice,100.00,0.30,100.00,2.50,0.53,96.67,3.33';
    await importPayoutReport(d, 'sandbox', await readPayoutReport(csv([HEADER, row1])), { fileName: 'a.csv' });
    // The same row in another layout (order of rows, title) is the same figures: not a correction.
    const r = await importPayoutReport(d, 'sandbox', await readPayoutReport(csv([HEADER, row2, row1])), { fileName: 'b.csv' });
    expect(r.rowsNew).toBe(1);
    await d.close();
  });
});
