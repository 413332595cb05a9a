import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { importPayoutReport } from '../../src/payout-import/import.js';
import { readPayoutReport } from '../../src/payout-reports/read.js';
import { factoringEvent, findings, invoiceEvent, pass, payoutEvent } from '../payout-reports/fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);
const csv = (lines: string[]) => new TextEncoder().encode(lines.join('\r\n') + '\r\n');
const HEADER = 'Payout Reference,Order No,Doc No,Doc Type,Transaction Amount,Discount %,MDR %,Transaction Fee,Gross Purchase Price,Discount,VAT on Discount,Transfer Amount,Total Deductions';

describe('a credit note written with positive amounts ("whatever sign the file writes")', () => {
  // The credit note's own figures add up as written: 20.00 - 0.60 = 19.40.
  const file = csv([
    HEADER,
    'PO2026030200000001,ORD-1,INV-1,invoice,100.00,2.5,2.5,0.30,100.00,2.50,0.53,96.67,3.33',
    'PO2026030200000001,ORD-1,CN-1,credit note,20.00,2.5,2.5,0.00,20.00,0.50,0.10,19.40,0.60',
  ]);

  it('is read into a row whose Transfer Amount is still Gross Purchase Price - Total Deductions', async () => {
    const { rows } = await readPayoutReport(file);
    const cn = rows.find((r) => r.docNo === 'CN-1')!;
    expect({ transfer: cn.transferAmountCents, grossMinusDeductions: cn.grossPurchasePriceCents - cn.totalDeductionsCents })
      .toEqual({ transfer: -1940n, grossMinusDeductions: -1940n });
  });

  it('raises no transfer/total finding on a row whose figures add up', async () => {
    const d = await createTestDatabase('pr_cn_sign');
    await invoiceEvent(d, { ref: 'INV-1', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 9_667n - 1_940n, eventTime: day(2), invoices: ['INV-1'] });
    await importPayoutReport(d, 'sandbox', await readPayoutReport(file), { fileName: 'r.csv' });
    await pass(d, at(4));
    const f = await findings(d, 'payout_deduction_mismatch');
    expect(f.map((x) => x.expected).filter((e) => /transfer|total/.test(e ?? ''))).toEqual([]);
  });
});

describe('a payout report with amounts the ledger stores but cannot add', () => {
  it('is refused at import or judged; it never makes every reconciliation pass fail', async () => {
    const d = await createTestDatabase('pr_overflow');
    await invoiceEvent(d, { ref: 'INV-9', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-9', receivedAt: day(1) });
    // Each cell is below the ledger's bigint limit (rows.ts MAX_CENTS), so the reader and import accept the file.
    const file = csv([
      HEADER,
      'PO2026030200000009,ORD-9,INV-9,invoice,100.00,2.5,2.5,0.30,100.00,50000000000000000.00,50000000000000000.00,1.00,3.33',
    ]);
    await payoutEvent(d, { sepa: 'PO2026030200000009', cents: 100n, eventTime: day(2), invoices: ['INV-9'] });
    const imported = await importPayoutReport(d, 'sandbox', await readPayoutReport(file), { fileName: 'big.csv' });
    expect(imported.rowsNew).toBe(1);
    // Discount + Fee + VAT is beyond a bigint: the pass adds in numeric, and the row is judged.
    const outcome = await pass(d, at(4)).then(() => 'ok', (e: Error) => e.message);
    expect(outcome).toBe('ok');
    const [finding] = await findings(d, 'payout_deduction_mismatch');
    expect(finding?.expected).toContain('total=10000000000000000030');
  });
});
