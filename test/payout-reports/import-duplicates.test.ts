import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { importPayoutReport } from '../../src/payout-import/import.js';
import { readPayoutReport } from '../../src/payout-reports/read.js';
import { invoiceEvent, payoutEvent } from '../payout-reports/fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const csv = (lines: string[]) => new TextEncoder().encode(lines.join('\r\n') + '\r\n');
const HEADER = 'Payout Reference,Order No,Doc No,Doc Type,Transaction Amount,Transaction Fee,Gross Purchase Price,Discount,VAT on Discount,Transfer Amount,Total Deductions';

describe('one document twice for one payout in one file, the payout named once by SEPA reference and once by uuid', () => {
  it('refuses the file ("one document twice for one payout refuse the file"), not store one row and drop the other', async () => {
    const d = await createTestDatabase('pr_dup_ref');
    await invoiceEvent(d, { ref: 'INV-1', eventTime: day(1) });
    const uuid = await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 9_667n, eventTime: day(2), invoices: ['INV-1'] });
    const file = csv([
      HEADER,
      'PO2026030200000001,ORD-1,INV-1,invoice,100.00,0.30,100.00,2.50,0.53,96.67,3.33',
      `${uuid},ORD-1,INV-1,invoice,100.00,0.30,100.00,2.50,0.53,90.00,10.00`,
    ]);
    const outcome = await importPayoutReport(d, 'sandbox', await readPayoutReport(file), { fileName: 'dup.csv' })
      .then((r) => `stored: rows ${r.rows}, rows new ${r.rowsNew}`, (e: Error) => `refused: ${e.message}`);
    expect(outcome).toMatch(/^refused/);
  });
});
