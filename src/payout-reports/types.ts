import type { PayoutCurrency } from './amounts.js';

export type PayoutDocType = 'invoice' | 'credit_note' | 'buyer_payment' | 'dispute';

/** One document settled by a payout, as its report row states it, amounts in integer cents. */
export interface PayoutReportRow {
  /** 1-based line (CSV) or row (XLSX) in the file. */
  line: number;
  /** From the optional Payout Reference column (a payout's sepa_instruction_id or payout_uuid). */
  payoutReference: string | null;
  orderNo: string | null;
  docNo: string;
  docType: PayoutDocType;
  /** From a Currency column or the amounts' sign or code. */
  currency: PayoutCurrency | null;
  /** Credit note, buyer payment and dispute rows: -|x| (they reduce the payout); invoice rows as written. */
  transactionAmountCents: bigint;
  /** Discount % x 10,000 (2.9 % -> 29000); null when the column is absent or the cell empty. */
  discountRateMicros: number | null;
  mdrRateMicros: number | null;
  transactionFeeCents: bigint;
  /** Signed as transactionAmountCents. */
  grossPurchasePriceCents: bigint;
  discountCents: bigint;
  vatOnDiscountCents: bigint;
  /** Signed as transactionAmountCents. */
  transferAmountCents: bigint;
  totalDeductionsCents: bigint;
}

export interface PayoutReportFile {
  format: 'csv' | 'xlsx';
  sha256: string;
  rows: PayoutReportRow[];
}

/** A file that is no payout report bnpl-recon can read; the message names the problem and where. */
export class PayoutReportFormatError extends Error {
  override readonly name = 'PayoutReportFormatError';
}
