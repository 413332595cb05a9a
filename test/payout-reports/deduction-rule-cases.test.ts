import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from '../payout-reports/fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// TERMS (fixtures.ts): bank_transfer/30 days 2.5 %, bank_transfer 2.9 %, default 3.0 %, fee 30, VAT 19 %, currency EUR.

describe('payout_deduction_mismatch: payment terms unknown', () => {
  it('does not judge the discount when the payment terms are unknown and the contract has a rate per terms for the method (docs/contract-terms.md)', async () => {
    const d = await createTestDatabase('pr_terms_unknown');
    const order = randomUUID();
    await invoiceEvent(d, { ref: 'INV-T', order, eventTime: day(1) });
    // factoring/approved says bank_transfer, but carries no payment_terms (payloads.ts: nullish)
    await factoringEvent(d, { ref: 'INV-T', receivedAt: day(1), method: 'bank_transfer', termsDays: null });
    // The provider charged the 30-day rate, 2.5 % (which may well be right: the terms are not known)
    const rows = [invoiceRow({ doc: 'INV-T', order: 'O1', cents: 10_000n, rateMicros: 25_000 })];
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-T'] });
    await importReport(d, rows);
    await pass(d, at(4));
    // "When no entry matches, or the invoice's method or terms are not known while a more specific entry
    // could apply, that row's discount is not judged (nothing is reported on a guess)."
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.expected, f.observed])).toEqual([]);
  });
});

describe('payout_deduction_mismatch: a row in another currency', () => {
  it('still checks the row\'s own arithmetic (docs/contract-terms.md: "Rows in another currency are checked only for their own arithmetic")', async () => {
    const d = await createTestDatabase('pr_other_currency');
    const inv = await invoiceEvent(d, { ref: 'INV-G', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-G', receivedAt: day(1) });
    const good = invoiceRow({ doc: 'INV-G', order: 'O1', cents: 10_000n });
    // Transfer Amount is one pound short of Gross Purchase Price - Total Deductions: the row does not add up.
    const rows = [{ ...good, currency: 'GBP' as const, transferAmountCents: good.transferAmountCents - 100n }];
    const payout = await payoutEvent(d, { sepa: 'PO2026030200000002', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-G'] });
    await importReport(d, rows);
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.entity_id, f.subject, f.expected, f.observed])).toEqual([
      [inv, payout, 'transfer=9667', 'transfer=9567'],
    ]);
  });
});

describe('payout_deduction_mismatch: the MDR % column', () => {
  it('flags an MDR % that is not the contract\'s rate (docs/contract-terms.md: "MDR %, when the report has the column, equals the contract\'s rate")', async () => {
    const d = await createTestDatabase('pr_mdr_column');
    await invoiceEvent(d, { ref: 'INV-M', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-M', receivedAt: day(1) }); // bank_transfer, 30 days: 2.5 %
    // The report states an MDR of 3.5 % for the row (the discount itself is at 2.5 %).
    const rows = [{ ...invoiceRow({ doc: 'INV-M', order: 'O1', cents: 10_000n }), mdrRateMicros: 35_000 }];
    await payoutEvent(d, { sepa: 'PO2026030200000003', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-M'] });
    await importReport(d, rows);
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).length).toBe(1);
  });
});

describe('payout_deduction_mismatch: a credit note refunding its share of the fee', () => {
  it('judges a credit note only on its arithmetic and the fixed fee (docs/contract-terms.md), not on a discount that must be 0', async () => {
    const d = await createTestDatabase('pr_credit_note_discount');
    await invoiceEvent(d, { ref: 'INV-C', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-C', receivedAt: day(1) });
    const inv = invoiceRow({ doc: 'INV-C', order: 'O1', cents: 10_000n });
    // Credit note of 100.00 refunding 2.5 % discount and its VAT: every figure adds up exactly, no fixed fee.
    const cn = {
      ...inv, line: 3, docNo: 'CN-1', docType: 'credit_note' as const, orderNo: null, discountRateMicros: 25_000, mdrRateMicros: 25_000,
      transactionAmountCents: -10_000n, grossPurchasePriceCents: -10_000n, transactionFeeCents: 0n,
      discountCents: -250n, vatOnDiscountCents: -48n, totalDeductionsCents: -298n, transferAmountCents: -9_702n,
    };
    const rows = [inv, cn];
    await payoutEvent(d, { sepa: 'PO2026030200000004', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-C'] });
    await importReport(d, rows);
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.entity_id, f.expected, f.observed])).toEqual([]);
  });
});

describe('payout_deduction_mismatch: fixed fee of an order whose second invoice has no invoice event', () => {
  it('does not claim the fixed fee is missing on INV-2 when the report gives both rows Order No ORD-1', async () => {
    const d = await createTestDatabase('pr_fee_order_key');
    const order = randomUUID();
    await invoiceEvent(d, { ref: 'INV-1', order, eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(1) }); // its invoice/created has not arrived (or was missed)
    // One report, one order ORD-1: the fee on the first invoice, none on the second, as the contract says.
    const rows = [
      invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, line: 2 }),
      invoiceRow({ doc: 'INV-2', order: 'ORD-1', cents: 5_000n, feeCents: 0n, line: 3 }),
    ];
    await payoutEvent(d, { sepa: 'PO2026030200000005', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-1', 'INV-2'] });
    await importReport(d, rows);
    await pass(d, at(4));
    expect((await findings(d, 'payout_deduction_mismatch')).map((f) => [f.entity_id, f.expected, f.observed])).toEqual([]);
  });
});
