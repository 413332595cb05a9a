import { describe, expect, it } from 'vitest';
import { importPayoutReport } from '../../src/payout-import/import.js';
import { readPayoutReport } from '../../src/payout-reports/read.js';
import { fetchAll } from '../../src/reports/source.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, invoiceEvent, pass, payoutEvent } from '../payout-reports/fixtures.js';

// The payout report reader accepts any amount a bigint stores (src/payout-reports/rows.ts MAX_CENTS, ±X below),
// so the sums of `report payouts`' composition columns (src/reports/payouts.ts) and one row's Discount +
// Transaction Fee pass the bigint range: the report must still list the payout, with exact sums.

const X = 9_223_372_036_854_775_807n;
const MAX = '92233720368547758.07';
const HEADER = 'Payout Reference,Order No,Doc No,Doc Type,Transaction Amount,Discount %,MDR %,Transaction Fee,Gross Purchase Price,Discount,VAT on Discount,Transfer Amount,Total Deductions';
const SEPA = 'PO2026030200000009';
const invoice = (doc: string) => `${SEPA},ORD-9,${doc},invoice,${MAX},2.5,2.5,${MAX},${MAX},${MAX},${MAX},${MAX},${MAX}`;
const deduction = (doc: string, type: string) => `${SEPA},,${doc},${type},-${MAX},,,0.00,-${MAX},0.00,0.00,-${MAX},0.00`;

describe('report payouts: report rows whose amounts sum beyond a bigint', () => {
  it('lists the payout with each composition column summed exactly, where the pass judged the same rows', async () => {
    const d = await createTestDatabase('rep_payouts_beyond_bigint');
    for (const ref of ['INV-1', 'INV-2']) {
      await invoiceEvent(d, { ref, eventTime: '2026-03-01T06:00:00.000000000Z' });
      await factoringEvent(d, { ref, receivedAt: '2026-03-01T06:00:00Z' });
    }
    const payout = await payoutEvent(d, { sepa: SEPA, cents: 100n, eventTime: '2026-03-02T06:00:00.000000000Z', invoices: ['INV-1', 'INV-2'] });
    const lines = [
      HEADER, invoice('INV-1'), invoice('INV-2'), deduction('CN-1', 'credit note'), deduction('CN-2', 'credit note'),
      deduction('BP-1', 'buyer payment'), deduction('BP-2', 'buyer payment'), deduction('DP-1', 'dispute'), deduction('DP-2', 'dispute'),
    ];
    const file = await readPayoutReport(new TextEncoder().encode(lines.map((l) => `${l}\r\n`).join('')));
    await importPayoutReport(d, 'sandbox', file, { fileName: 'report.csv' });
    // The pass judges these rows (test/payout-reports/reader-signs-and-sizes.test.ts), in numeric: the invoice
    // rows' own arithmetic and the contract's deductions (fixtures.ts TERMS) do not add up, the deduction rows' do.
    const summary = await pass(d, new Date('2026-03-04T12:00:00Z'));
    const judged = (fee: number) => `discount=230584300921369395;fee=${fee};total=27670116110564327421;transfer=0;vat=1752440687002407403`; // VAT on the Discount alone: TERMS leave vat_on_fixed_fee unset, and the expected value is the documented reading
    expect({ judged: summary.invoices?.judged, findings: (await findings(d, 'payout_deduction_mismatch')).map((f) => f.expected).sort() }).toEqual({
      judged: true,
      findings: [judged(0), judged(30)],
    });

    const rows = (await fetchAll(payoutsSource(d, { environment: 'sandbox' }), undefined, 100)) ?? [];
    const abs = (n: bigint) => (n < 0n ? -n : n);
    const cents = (n: bigint) => ({ cents: n.toString(), amount: `${n < 0n ? '-' : ''}${abs(n) / 100n}.${String(abs(n) % 100n).padStart(2, '0')}` });
    const composition = Object.fromEntries(
      (['gross', 'fee', 'vat', 'credit_notes', 'buyer_payments', 'other_deductions', 'net'] as const).map((c) => [c, { cents: rows[0]?.[`report_${c}_cents`], amount: rows[0]?.[`report_${c}`] }]),
    );
    expect({ payouts: rows.map((r) => r.payout_uuid), composition }).toEqual({
      payouts: [payout],
      composition: {
        gross: cents(2n * X), fee: cents(4n * X), vat: cents(2n * X), credit_notes: cents(2n * X), buyer_payments: cents(2n * X),
        other_deductions: cents(2n * X), net: cents(-4n * X),
      },
    });
  });
});
