import { describe, expect, it } from 'vitest';
import { ContractTermsError, parseContractTerms, type ContractTerms } from '../../src/payout-reports/contract-terms.js';
import { expectedDeductions, judgeRow, mdrRateFor, roundMicroCents, withinRounding, type InvoiceFacts } from '../../src/payout-reports/deductions.js';
import { type PayoutReportRow } from '../../src/payout-reports/read.js';

/** The contract of the spec's example: 2.5 % by bank transfer at 30 days, 2.9 % by bank transfer otherwise, 3.0 % else; 0.30 per order; 19 % VAT. */
const TERMS_JSON = JSON.stringify({
  currency: 'EUR',
  mdr: [
    { payment_method: 'bank_transfer', payment_terms_days: 30, percent: '2.5' },
    { payment_method: 'bank_transfer', percent: '2.9' },
    { percent: 3.0 },
  ],
  fixed_fee_cents: 30,
  vat_percent: '19',
});
const terms: ContractTerms = parseContractTerms(TERMS_JSON);
/** The same contract charging VAT on the fixed fee too (vat_on_fixed_fee: true). */
const termsVatOnFee: ContractTerms = parseContractTerms(JSON.stringify({ ...JSON.parse(TERMS_JSON), vat_on_fixed_fee: true }));
const bankTransfer30 = { paymentMethod: 'bank_transfer', paymentTermsDays: 30 };

function refusal(text: string): string {
  try {
    parseContractTerms(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ContractTermsError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${text}`);
}

describe('contract terms', () => {
  it('parse to micros and cents', () => {
    expect(terms).toEqual({
      currency: 'EUR',
      mdr: [
        { paymentMethod: 'bank_transfer', paymentTermsDays: 30, rateMicros: 25000 },
        { paymentMethod: 'bank_transfer', paymentTermsDays: null, rateMicros: 29000 },
        { paymentMethod: null, paymentTermsDays: null, rateMicros: 30000 },
      ],
      fixedFeeCents: 30n,
      vatRateMicros: 190000,
      vatOnFixedFee: null,
    });
    expect(termsVatOnFee.vatOnFixedFee).toBe(true);
    expect(parseContractTerms('{"mdr":[{"percent":"0.0001"}],"fixed_fee_cents":0,"vat_percent":"100"}')).toMatchObject({ currency: null, mdr: [{ rateMicros: 1 }], vatRateMicros: 1_000_000 });
  });

  it.each([
    ['{', /^not JSON: /],
    ['{"mdr":[],"fixed_fee_cents":30,"vat_percent":"19"}', /^mdr: /],
    ['{"mdr":[{"percent":"2.55555"}],"fixed_fee_cents":30,"vat_percent":"19"}', /^mdr\[0\]\.percent: "2\.55555" has more than 4 decimals/],
    ['{"mdr":[{"percent":"-1"}],"fixed_fee_cents":30,"vat_percent":"19"}', /^mdr\[0\]\.percent: "-1" is not between 0 and 100/],
    ['{"mdr":[{"percent":"2,9%"}],"fixed_fee_cents":30,"vat_percent":"19"}', /^mdr\[0\]\.percent: "2,9%" is not a decimal number/],
    ['{"mdr":[{"percent":1}],"fixed_fee_cents":0.5,"vat_percent":"19"}', /^fixed_fee_cents: /],
    ['{"mdr":[{"percent":1}],"fixed_fee_cents":30}', /^vat_percent: /],
    ['{"mdr":[{"percent":1}],"fixed_fee_cents":30,"vat_percent":"19","vat":"7"}', /vat/],
    ['{"mdr":[{"percent":1,"payment_terms_days":30}],"fixed_fee_cents":30,"vat_percent":"19"}', /^mdr\[0\]\.payment_terms_days: payment_terms_days needs a payment_method/],
    ['{"mdr":[{"percent":1},{"percent":2}],"fixed_fee_cents":30,"vat_percent":"19"}', /^mdr\[1\]: names the same payment method and terms as mdr\[0\]/],
    ['{"currency":"USD","mdr":[{"percent":1}],"fixed_fee_cents":30,"vat_percent":"19"}', /^currency: /],
  ])('are refused naming the field: %s', (text, message) => {
    expect(refusal(text)).toMatch(message);
  });
});

describe('the contract rate for a payment method and terms', () => {
  it('is the most specific entry: method and terms, then method, then the default', () => {
    expect(mdrRateFor(terms, 'bank_transfer', 30)).toEqual({ rateMicros: 25000, entry: 0 });
    expect(mdrRateFor(terms, 'bank_transfer', 60)).toEqual({ rateMicros: 29000, entry: 1 });
    expect(mdrRateFor(terms, 'direct_debit', 30)).toEqual({ rateMicros: 30000, entry: 2 });
    expect(mdrRateFor(terms, 'direct_debit', null)).toEqual({ rateMicros: 30000, entry: 2 });
  });

  it('is not decided when an unknown method or terms could make a more specific entry apply, or no entry matches', () => {
    expect(mdrRateFor(terms, null, 30).rateMicros).toBeNull();
    expect(mdrRateFor(terms, 'bank_transfer', null).rateMicros).toBeNull();
    const noDefault = parseContractTerms('{"mdr":[{"payment_method":"bank_transfer","percent":"2.9"}],"fixed_fee_cents":30,"vat_percent":"19"}');
    expect(mdrRateFor(noDefault, 'direct_debit', 30)).toEqual({ rateMicros: null, reason: 'the contract has no rate for direct_debit at 30 days and no default rate' });
    const onlyDefault = parseContractTerms('{"mdr":[{"percent":"3"}],"fixed_fee_cents":30,"vat_percent":"19"}');
    expect(mdrRateFor(onlyDefault, null, null)).toEqual({ rateMicros: 30000, entry: 0 });
  });
});

describe('rounding', () => {
  it('rounds micro-cents half away from zero', () => {
    expect([2_500_000n, 2_499_999n, -2_500_000n, -2_499_999n, 0n, 999_999n].map(roundMicroCents)).toEqual([3n, 2n, -3n, -2n, 0n, 1n]);
  });

  it('accepts the exact value rounded up or down, nothing further', () => {
    // 2.5 cents exactly: 2 and 3 are both within a cent.
    expect([1n, 2n, 3n, 4n].map((c) => withinRounding(c, 2_500_000n))).toEqual([false, true, true, false]);
    // 29 cents exactly: 28 and 30 are a whole cent off.
    expect([28n, 29n, 30n].map((c) => withinRounding(c, 29_000_000n))).toEqual([false, true, false]);
    expect([-3n, -2n, -1n].map((c) => withinRounding(c, -2_500_000n))).toEqual([true, true, false]);
  });
});

describe('expected deductions', () => {
  it('for an order\'s first invoice: 2.5 % of 1,234.56 is 30.864 -> 30.86, fee 0.30, 19 % VAT of 31.16 is 5.9204 -> 5.92', () => {
    expect(expectedDeductions(termsVatOnFee, { ...bankTransfer30, transactionAmountCents: 123456n, firstInvoiceOfOrder: true })).toEqual({
      mdrRateMicros: 25000,
      discountExactMicroCents: 3_086_400_000n,
      discountCents: 3086n,
      transactionFeeCents: 30n,
      vatExactMicroCents: 592_040_000n,
      vatCents: 592n,
      totalDeductionsCents: 3708n,
      transferAmountCents: 119748n,
    });
  });

  it('for a later invoice of the order: no fixed fee, so VAT on the discount alone; half cents round away from zero', () => {
    // 2.5 % of 1.00 is 2.5 cents -> 3; 19 % of 3 cents is 0.57 -> 1.
    expect(expectedDeductions(terms, { ...bankTransfer30, transactionAmountCents: 100n, firstInvoiceOfOrder: false })).toMatchObject({
      discountCents: 3n,
      transactionFeeCents: 0n,
      vatCents: 1n,
      totalDeductionsCents: 4n,
      transferAmountCents: 96n,
    });
    // 2.9 % of 50.00 is 145 cents; with the fee, 19 % of 175 cents is 33.25 -> 33.
    expect(expectedDeductions(termsVatOnFee, { paymentMethod: 'bank_transfer', paymentTermsDays: 14, transactionAmountCents: 5000n, firstInvoiceOfOrder: true })).toMatchObject({ discountCents: 145n, vatCents: 33n, totalDeductionsCents: 208n });
  });

  it('with VAT on the fixed fee not set, the documented reading: VAT on the Discount alone', () => {
    // provider-merchant-docs.md: "VAT on Discount: VAT on the fee", Discount being "the fee in money".
    // 19 % of 30.86 is 5.8634 -> 5.86.
    expect(expectedDeductions(terms, { ...bankTransfer30, transactionAmountCents: 123456n, firstInvoiceOfOrder: true })).toMatchObject({
      discountCents: 3086n, transactionFeeCents: 30n, vatCents: 586n, totalDeductionsCents: 3702n, transferAmountCents: 119754n,
    });
  });

  it('leaves what it cannot know as null', () => {
    const unknown = expectedDeductions(terms, { paymentMethod: null, paymentTermsDays: null, transactionAmountCents: 100n, firstInvoiceOfOrder: null });
    expect(unknown).toMatchObject({ mdrRateMicros: null, discountCents: null, transactionFeeCents: null, vatCents: null, totalDeductionsCents: null });
  });
});

/** The invoice of the expected-deductions case above, as a correct report row writes it. */
const ROW: PayoutReportRow = {
  line: 2,
  payoutReference: null,
  orderNo: 'ORD-1',
  docNo: 'INV-1',
  docType: 'invoice',
  currency: 'EUR',
  transactionAmountCents: 123456n,
  discountRateMicros: 25000,
  mdrRateMicros: 25000,
  transactionFeeCents: 30n,
  grossPurchasePriceCents: 123456n,
  discountCents: 3086n,
  vatOnDiscountCents: 592n,
  transferAmountCents: 119748n,
  totalDeductionsCents: 3708n,
};
const first: InvoiceFacts = { ...bankTransfer30, firstInvoiceOfOrder: true };
/** A row with changed deductions whose totals still add up, so only the changed part is judged. */
const consistent = (change: Partial<PayoutReportRow>): PayoutReportRow => {
  const row = { ...ROW, ...change };
  const total = row.discountCents + row.transactionFeeCents + row.vatOnDiscountCents;
  return { ...row, totalDeductionsCents: total, transferAmountCents: row.grossPurchasePriceCents - total };
};
const aspects = (row: PayoutReportRow, facts = first) => judgeRow(terms, row, facts).map((f) => f.aspect);

describe('a report row judged against the contract', () => {
  it('finds nothing in a correct row, nor in one rounded the other way within the cent', () => {
    expect(judgeRow(terms, ROW, first)).toEqual([]);
    // 30.864 rounded up is 30.87; then 19 % of 31.17 is 5.9223: 5.92 or 5.93.
    expect(aspects(consistent({ discountCents: 3087n, vatOnDiscountCents: 593n }))).toEqual([]);
  });

  it('finds a Discount more than the rounding off, with the exact value in cents', () => {
    const findings = judgeRow(terms, consistent({ discountCents: 3088n }), first);
    expect(findings.map((f) => [f.aspect, f.expected, f.observed])).toEqual([['discount', '3086.4', '3088']]);
    expect(findings[0]!.message).toBe('INV-1: Discount 30.88 EUR is not 2.5 % of 1234.56 EUR rounded to the cent (exactly 3086.4 cents)');
  });

  it('judges a half-cent Discount: 2.5 % of 1.00 is 2.5 cents, so 2 and 3 pass, 1 and 4 do not', () => {
    const small = (discount: bigint) =>
      aspects(consistent({ transactionAmountCents: 100n, grossPurchasePriceCents: 100n, discountCents: discount, transactionFeeCents: 0n, vatOnDiscountCents: discount === 2n ? 0n : 1n }), { ...first, firstInvoiceOfOrder: false });
    expect([1n, 2n, 3n, 4n].map(small)).toEqual([['discount'], [], [], ['discount']]);
  });

  it('judges VAT on Discount + Transaction Fee when the contract says so, on the Discount when it says so, and accepts either when it does not', () => {
    // 19 % of 30.86 alone is 5.8634 -> 5.86; with the fee, of 31.16, 5.9204 -> 5.92.
    const judged = (t: ContractTerms, cents: bigint) => judgeRow(t, consistent({ vatOnDiscountCents: cents }), first).map((f) => [f.aspect, f.expected, f.observed]);
    expect(judged(termsVatOnFee, 586n)).toEqual([['vat', '592.04', '586']]);
    expect(judged(termsVatOnFee, 592n)).toEqual([]);
    const onDiscount = parseContractTerms(JSON.stringify({ ...JSON.parse(TERMS_JSON), vat_on_fixed_fee: false }));
    expect(judged(onDiscount, 592n)).toEqual([['vat', '586.34', '592']]);
    expect(judged(onDiscount, 586n)).toEqual([]);
    expect(judged(terms, 586n)).toEqual([]);
    expect(judged(terms, 592n)).toEqual([]);
    expect(judged(terms, 600n)).toEqual([['vat', '586.34', '600']]);
    expect(judgeRow(terms, consistent({ vatOnDiscountCents: 600n }), first)[0]!.message).toMatch(/is not 19 % of Discount 30\.86 EUR \(exactly 586\.34 cents\) nor of Discount \+ Transaction Fee 31\.16 EUR \(exactly 592\.04 cents\)/);
    // A half cent of VAT: 19 % of 2.50 is 47.5 cents: 47 and 48 pass, 49 does not.
    const vat = (cents: bigint) => aspects(consistent({ transactionAmountCents: 10000n, grossPurchasePriceCents: 10000n, discountCents: 250n, transactionFeeCents: 0n, vatOnDiscountCents: cents }), { ...first, firstInvoiceOfOrder: false });
    expect([46n, 47n, 48n, 49n].map(vat)).toEqual([['vat'], [], [], ['vat']]);
  });

  it('finds the fixed fee charged on a later invoice of the order, or not as the contract says on its first', () => {
    expect(judgeRow(terms, ROW, { ...first, firstInvoiceOfOrder: false }).map((f) => [f.aspect, f.expected, f.observed])).toEqual([['fixed_fee_twice', '0', '30']]);
    expect(aspects(consistent({ transactionFeeCents: 0n, vatOnDiscountCents: 586n }))).toEqual(['transaction_fee']);
    expect(aspects(consistent({ transactionFeeCents: 60n, vatOnDiscountCents: 598n }))).toEqual(['transaction_fee']);
    // Not known whether it is the order's first invoice: the fee is not judged.
    expect(aspects(ROW, { ...first, firstInvoiceOfOrder: null })).toEqual([]);
  });

  it('finds a rate other than the contract\'s, and judges no rate when the facts do not decide it', () => {
    expect(aspects(ROW, { paymentMethod: 'bank_transfer', paymentTermsDays: 60, firstInvoiceOfOrder: true })).toEqual(['mdr_rate', 'discount']);
    expect(aspects({ ...ROW, mdrRateMicros: 29000 })).toEqual(['mdr_rate']);
    expect(aspects(ROW, { paymentMethod: null, paymentTermsDays: null, firstInvoiceOfOrder: true })).toEqual([]);
  });

  it('finds totals, gross purchase price and transfer that are not exact, on any row', () => {
    expect(aspects({ ...ROW, totalDeductionsCents: 3709n, transferAmountCents: 119747n })).toEqual(['total_deductions']);
    expect(aspects({ ...ROW, transferAmountCents: 119749n })).toEqual(['transfer_amount']);
    expect(aspects({ ...ROW, grossPurchasePriceCents: 123455n, transferAmountCents: 119747n })).toEqual(['gross_purchase_price']);
    const creditNote = { ...ROW, docType: 'credit_note' as const, transactionAmountCents: -500n, grossPurchasePriceCents: -500n, discountCents: 0n, transactionFeeCents: 0n, vatOnDiscountCents: 0n, totalDeductionsCents: 0n, transferAmountCents: -500n };
    expect(aspects(creditNote)).toEqual([]);
    expect(aspects({ ...creditNote, transferAmountCents: -400n })).toEqual(['transfer_amount']);
    expect(aspects({ ...creditNote, transactionFeeCents: 30n, totalDeductionsCents: 30n, transferAmountCents: -530n })).toEqual(['transaction_fee']);
  });

  it('judges no contract part of a row in another currency than the contract\'s', () => {
    expect(aspects({ ...ROW, currency: 'GBP', discountCents: 9999n, totalDeductionsCents: 10621n, transferAmountCents: 112835n })).toEqual([]);
  });
});
