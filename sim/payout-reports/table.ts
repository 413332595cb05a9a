import type { PayoutDocType, PayoutRecord, PayoutReportRow } from '../model.js';
import type { ReportForm } from './forms.js';

/** A report cell before it is written: text, money in cents, or a rate in micros (2.5 % is 25,000). */
export type ReportCell = { text: string } | { cents: bigint } | { micros: number };

export interface ReportTable {
  header: string[];
  rows: ReportCell[][];
}

const DOCUMENTED = [
  'Order No',
  'Doc No',
  'Doc Type',
  'Transaction Amount',
  'Discount %',
  'MDR %',
  'Transaction Fee',
  'Gross Purchase Price',
  'Discount',
  'VAT on Discount',
  'Transfer Amount',
  'Total Deductions',
] as const;

const DOC_TYPES: Record<PayoutDocType, string> = { invoice: 'invoice', credit_note: 'credit note', buyer_payment: 'buyer payment', dispute: 'dispute' };
const SYMBOLS: Record<string, string> = { EUR: '€', GBP: '£' };

function headerText(name: string, form: ReportForm): string {
  if (form.headers === 'upper') return name.toUpperCase();
  if (form.headers === 'lower_snake') return name.toLowerCase().replaceAll(' ', '_');
  return name;
}

function docTypeText(type: PayoutDocType, form: ReportForm): string {
  const text = DOC_TYPES[type];
  if (form.docTypes === 'title') return text.replace(/\b\w/g, (c) => c.toUpperCase());
  if (form.docTypes === 'upper_snake') return text.toUpperCase().replaceAll(' ', '_');
  return text;
}

/** The payout's report as a table in the spec's columns, with the form's optional columns. */
export function reportTable(payout: PayoutRecord, currency: string, form: ReportForm): ReportTable {
  const report = payout.report;
  if (!report) throw new Error(`payout ${payout.uuid} has no report`);
  // A report that cannot be tied by its contents carries the reference whatever the form.
  let reference = form.payoutReference;
  if (report.reference !== null && reference?.value !== report.reference) reference = { header: 'Payout Reference', value: report.reference };
  const referenceValue = reference?.value === 'uuid' ? payout.uuid : payout.sepaInstructionId;
  const header = [
    ...(reference ? [headerText(reference.header, form)] : []),
    ...DOCUMENTED.slice(0, 3).map((n) => headerText(n, form)),
    ...(form.currencyColumn ? [headerText('Currency', form)] : []),
    ...DOCUMENTED.slice(3).map((n) => headerText(n, form)),
  ];
  const rows = report.rows.map((r: PayoutReportRow): ReportCell[] => [
    ...(reference ? [{ text: referenceValue }] : []),
    { text: r.orderNo },
    { text: r.docNo },
    { text: docTypeText(r.docType, form) },
    ...(form.currencyColumn ? [{ text: currency }] : []),
    { cents: r.transactionAmountCents },
    { micros: r.rateMicros },
    { micros: r.rateMicros },
    { cents: r.transactionFeeCents },
    { cents: r.grossPurchasePriceCents },
    { cents: r.discountCents },
    { cents: r.vatOnDiscountCents },
    { cents: r.transferAmountCents },
    { cents: r.totalDeductionsCents },
  ]);
  return { header, rows };
}

/** An amount as the form writes it, by integer arithmetic: `-1.234,56 €`, `(€1,234.56)`, `12.00 EUR`. */
export function formatMoney(cents: bigint, form: ReportForm, currency: string): string {
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  let units = (abs / 100n).toString();
  if (form.thousands) units = units.replace(/\B(?=(\d{3})+$)/g, form.decimal === ',' ? '.' : ',');
  const number = `${units}${form.decimal}${(abs % 100n).toString().padStart(2, '0')}`;
  const symbol = SYMBOLS[currency] ?? currency;
  const marked =
    form.currencyMark === 'sign' ? (form.decimal === '.' ? `${symbol}${number}` : `${number} ${symbol}`) : form.currencyMark === 'code' ? `${number} ${currency}` : number;
  if (!negative) return marked;
  return form.negatives === 'parentheses' ? `(${marked})` : `-${marked}`;
}

/** A rate in micros as a percent number: 25,000 is `2.5` (or `2,5`), 30,000 is `3.0`. */
export function formatRate(micros: number, form: ReportForm): string {
  const units = Math.floor(micros / 10_000);
  const fraction = String(micros % 10_000).padStart(4, '0').replace(/0+$/, '') || '0';
  return `${units}${form.decimal}${fraction}`;
}
