import type { ContractTerms } from './contract-terms.js';
import { centsText, percentText } from './decimal.js';
import type { PayoutReportRow } from './types.js';

/**
 * What the contract says a payout report row should deduct, and the row judged against it. Integer
 * arithmetic only: a rate is micros of a percent (2.5 % = 25000), so amount x rate is exact in
 * millionths of a cent ("micro-cents"); rounding is half away from zero to the cent.
 *
 * The documented tolerance: a reported Discount or VAT on Discount is accepted when it is the exact
 * value rounded up or down to the cent (|reported - exact| < 1 cent), so a provider rounding
 * half-even, or down, is no finding. The fixed fee, Total Deductions, Gross Purchase Price and
 * Transfer Amount must be exact.
 */

const MICRO = 1_000_000n;

/** Micro-cents rounded half away from zero to the cent. */
export function roundMicroCents(microCents: bigint): bigint {
  const abs = microCents < 0n ? -microCents : microCents;
  const cents = (abs + MICRO / 2n) / MICRO;
  return microCents < 0n ? -cents : cents;
}

/** Whether reported cents are the exact value rounded up or down: |reported - exact| < 1 cent. */
export function withinRounding(reportedCents: bigint, exactMicroCents: bigint): boolean {
  const diff = reportedCents * MICRO - exactMicroCents;
  return (diff < 0n ? -diff : diff) < MICRO;
}

/** Micro-cents as cents in decimal ('3086.4' is 30.864 in the currency). */
export function microCentsText(microCents: bigint): string {
  const sign = microCents < 0n ? '-' : '';
  const abs = microCents < 0n ? -microCents : microCents;
  const fraction = String(abs % MICRO).padStart(6, '0').replace(/0+$/, '');
  return `${sign}${abs / MICRO}${fraction ? `.${fraction}` : ''}`;
}

export type RateChoice = { rateMicros: number; entry: number } | { rateMicros: null; reason: string };

/**
 * The contract's MDR for a payment method and terms: the most specific entry wins (method and
 * terms, then method, then the default entry with neither). An unknown method or terms decides
 * nothing while a more specific entry could apply: the row's fee is then not judged.
 */
export function mdrRateFor(terms: ContractTerms, paymentMethod: string | null, paymentTermsDays: number | null): RateChoice {
  const at = (method: string | null, days: number | null) => terms.mdr.findIndex((e) => e.paymentMethod === method && e.paymentTermsDays === days);
  const found = (entry: number): RateChoice => ({ rateMicros: terms.mdr[entry]!.rateMicros, entry });
  if (paymentMethod === null) {
    if (terms.mdr.some((e) => e.paymentMethod !== null)) return { rateMicros: null, reason: 'the payment method is not known and the contract has rates per method' };
  } else {
    if (paymentTermsDays !== null && at(paymentMethod, paymentTermsDays) >= 0) return found(at(paymentMethod, paymentTermsDays));
    if (paymentTermsDays === null && terms.mdr.some((e) => e.paymentMethod === paymentMethod && e.paymentTermsDays !== null)) {
      return { rateMicros: null, reason: `the payment terms are not known and the contract has rates per terms for ${paymentMethod}` };
    }
    if (at(paymentMethod, null) >= 0) return found(at(paymentMethod, null));
  }
  if (at(null, null) >= 0) return found(at(null, null));
  return { rateMicros: null, reason: `the contract has no rate for ${paymentMethod ?? 'this payment method'}${paymentTermsDays === null ? '' : ` at ${paymentTermsDays} days`} and no default rate` };
}

export interface InvoiceFacts {
  /** From the invoice's factoring events; null when no event said. */
  paymentMethod: string | null;
  paymentTermsDays: number | null;
  /** Whether this is the order's first invoice to appear in a payout report row; null: not known. */
  firstInvoiceOfOrder: boolean | null;
}

export interface ExpectedDeductions {
  /** null: no contract entry decides the rate (see mdrRateFor), and what depends on it is null too. */
  mdrRateMicros: number | null;
  discountExactMicroCents: bigint | null;
  discountCents: bigint | null;
  /** null when whether this is the order's first invoice is not known. */
  transactionFeeCents: bigint | null;
  vatExactMicroCents: bigint | null;
  vatCents: bigint | null;
  totalDeductionsCents: bigint | null;
  transferAmountCents: bigint | null;
}

/** An invoice row's deductions by the contract alone (what the metrics set beside the charged ones). */
export function expectedDeductions(terms: ContractTerms, input: InvoiceFacts & { transactionAmountCents: bigint }): ExpectedDeductions {
  const rate = mdrRateFor(terms, input.paymentMethod, input.paymentTermsDays).rateMicros;
  const discountExact = rate === null ? null : input.transactionAmountCents * BigInt(rate);
  const discount = discountExact === null ? null : roundMicroCents(discountExact);
  const fee = input.firstInvoiceOfOrder === null ? null : input.firstInvoiceOfOrder ? terms.fixedFeeCents : 0n;
  // The documented reading (VAT on the Discount) unless the contract charges it on the fee too.
  const vatExact = discount === null || fee === null ? null : (discount + (terms.vatOnFixedFee === true ? fee : 0n)) * BigInt(terms.vatRateMicros);
  const vat = vatExact === null ? null : roundMicroCents(vatExact);
  const total = discount === null || fee === null || vat === null ? null : discount + fee + vat;
  return {
    mdrRateMicros: rate,
    discountExactMicroCents: discountExact,
    discountCents: discount,
    transactionFeeCents: fee,
    vatExactMicroCents: vatExact,
    vatCents: vat,
    totalDeductionsCents: total,
    transferAmountCents: total === null ? null : input.transactionAmountCents - total,
  };
}

export type DeductionAspect = 'gross_purchase_price' | 'total_deductions' | 'transfer_amount' | 'mdr_rate' | 'discount' | 'transaction_fee' | 'fixed_fee_twice' | 'vat';

export interface DeductionFinding {
  aspect: DeductionAspect;
  /** Integer cents, or for a Discount or VAT the exact value in cents with decimals ('3086.4'); a rate in percent. */
  expected: string;
  observed: string;
  message: string;
}

type JudgedRow = Pick<PayoutReportRow, 'docType' | 'docNo' | 'currency' | 'transactionAmountCents' | 'mdrRateMicros' | 'transactionFeeCents' | 'grossPurchasePriceCents' | 'discountCents' | 'vatOnDiscountCents' | 'transferAmountCents' | 'totalDeductionsCents'>;

/**
 * A report row against its own arithmetic (every row) and the contract (invoice rows whose rate,
 * order position or currency the facts decide). The VAT is judged on the row's own Discount (and
 * Transaction Fee), so one over-charged fee is one finding, not two.
 */
export function judgeRow(terms: ContractTerms, row: JudgedRow, facts: InvoiceFacts): DeductionFinding[] {
  const money = (cents: bigint) => `${centsText(cents)}${row.currency ? ` ${row.currency}` : ''}`;
  const findings: DeductionFinding[] = [];
  const exact = (aspect: DeductionAspect, expected: bigint, observed: bigint, message: string) => {
    if (expected !== observed) findings.push({ aspect, expected: String(expected), observed: String(observed), message });
  };
  const sum = row.discountCents + row.transactionFeeCents + row.vatOnDiscountCents;
  exact('gross_purchase_price', row.transactionAmountCents, row.grossPurchasePriceCents, `${row.docNo}: Gross Purchase Price ${money(row.grossPurchasePriceCents)} is not the Transaction Amount ${money(row.transactionAmountCents)}`);
  exact('total_deductions', sum, row.totalDeductionsCents, `${row.docNo}: Total Deductions ${money(row.totalDeductionsCents)} is not Discount + Transaction Fee + VAT on Discount (${money(sum)})`);
  const transfer = row.grossPurchasePriceCents - row.totalDeductionsCents;
  exact('transfer_amount', transfer, row.transferAmountCents, `${row.docNo}: Transfer Amount ${money(row.transferAmountCents)} is not the Gross Purchase Price minus Total Deductions (${money(transfer)})`);

  if (terms.currency !== null && row.currency !== null && row.currency !== terms.currency) return findings;
  if (row.docType !== 'invoice') {
    exact('transaction_fee', 0n, row.transactionFeeCents, `${row.docNo}: a ${row.docType.replace('_', ' ')} carries a Transaction Fee of ${money(row.transactionFeeCents)}; the contract charges the fixed fee on an order's first invoice only`);
    return findings;
  }
  const rate = mdrRateFor(terms, facts.paymentMethod, facts.paymentTermsDays).rateMicros;
  if (rate !== null) {
    if (row.mdrRateMicros !== null && row.mdrRateMicros !== rate) {
      findings.push({ aspect: 'mdr_rate', expected: percentText(rate), observed: percentText(row.mdrRateMicros), message: `${row.docNo}: MDR ${percentText(row.mdrRateMicros)} % is not the contract's ${percentText(rate)} %` });
    }
    const discountExact = row.transactionAmountCents * BigInt(rate);
    if (!withinRounding(row.discountCents, discountExact)) {
      findings.push({ aspect: 'discount', expected: microCentsText(discountExact), observed: String(row.discountCents), message: `${row.docNo}: Discount ${money(row.discountCents)} is not ${percentText(rate)} % of ${money(row.transactionAmountCents)} rounded to the cent (exactly ${microCentsText(discountExact)} cents)` });
    }
  }
  if (facts.firstInvoiceOfOrder === true && row.transactionFeeCents !== terms.fixedFeeCents) {
    exact('transaction_fee', terms.fixedFeeCents, row.transactionFeeCents, `${row.docNo}: the order's first invoice carries a Transaction Fee of ${money(row.transactionFeeCents)}, not the contract's fixed fee ${money(terms.fixedFeeCents)}`);
  }
  if (facts.firstInvoiceOfOrder === false && row.transactionFeeCents !== 0n) {
    exact('fixed_fee_twice', 0n, row.transactionFeeCents, `${row.docNo}: a Transaction Fee of ${money(row.transactionFeeCents)} on an invoice after the order's first: the fixed fee is charged once per order`);
  }
  // VAT on the Discount, or on it and the fixed fee (ContractTerms.vatOnFixedFee); a reading the
  // terms leave open is a finding only when the row fits neither.
  const onDiscount = { base: row.discountCents, what: 'Discount' };
  const onBoth = { base: row.discountCents + row.transactionFeeCents, what: 'Discount + Transaction Fee' };
  const readings = terms.vatOnFixedFee === true ? [onBoth] : terms.vatOnFixedFee === false || row.transactionFeeCents === 0n ? [onDiscount] : [onDiscount, onBoth];
  const exactOf = (r: { base: bigint }) => r.base * BigInt(terms.vatRateMicros);
  if (!readings.some((r) => withinRounding(row.vatOnDiscountCents, exactOf(r)))) {
    const said = readings.map((r) => `of ${r.what} ${money(r.base)} (exactly ${microCentsText(exactOf(r))} cents)`).join(' nor ');
    findings.push({ aspect: 'vat', expected: microCentsText(exactOf(readings[0]!)), observed: String(row.vatOnDiscountCents), message: `${row.docNo}: VAT on Discount ${money(row.vatOnDiscountCents)} is not ${percentText(terms.vatRateMicros)} % ${said}, rounded to the cent` });
  }
  return findings;
}
