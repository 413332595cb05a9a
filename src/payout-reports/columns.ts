/**
 * The payout report's columns by their documented names (provider-merchant-docs.md, "The payout
 * report"), and the header of a file resolved to them.
 */
export const PAYOUT_REPORT_COLUMN_NAMES = {
  orderNo: 'Order No',
  docNo: 'Doc No',
  docType: 'Doc Type',
  transactionAmount: 'Transaction Amount',
  discountRate: 'Discount %',
  mdrRate: 'MDR %',
  transactionFee: 'Transaction Fee',
  grossPurchasePrice: 'Gross Purchase Price',
  discount: 'Discount',
  vatOnDiscount: 'VAT on Discount',
  transferAmount: 'Transfer Amount',
  totalDeductions: 'Total Deductions',
  payoutReference: 'Payout Reference',
  currency: 'Currency',
} as const;
export type PayoutReportColumn = keyof typeof PAYOUT_REPORT_COLUMN_NAMES;

// The documentation does not say whether a file carries its payout; these are the names the
// reference column goes by in provider exports and merchants' own sheets.
const SYNONYMS: Partial<Record<PayoutReportColumn, readonly string[]>> = {
  payoutReference: ['Payout ID', 'Payout UUID', 'SEPA Reference', 'Payout Ref'],
};

/** Every column but Order No, the two rates, the payout reference and the currency. */
export const REQUIRED_COLUMNS: readonly PayoutReportColumn[] = [
  'docNo', 'docType', 'transactionAmount', 'transactionFee', 'grossPurchasePrice', 'discount', 'vatOnDiscount', 'transferAmount', 'totalDeductions',
];

export const AMOUNT_COLUMNS = ['transactionAmount', 'transactionFee', 'grossPurchasePrice', 'discount', 'vatOnDiscount', 'transferAmount', 'totalDeductions'] as const;
export type AmountColumn = (typeof AMOUNT_COLUMNS)[number];

/**
 * A header compared case-, space-, underscore- and punctuation-insensitively; '%' counts, spelled
 * out, so 'Discount %' (a rate) never meets 'Discount' (an amount).
 */
export const headerKey = (header: string): string =>
  header.normalize('NFKC').toLowerCase().replace(/%/g, 'percent').replace(/[^\p{L}\p{N}]/gu, '');

const KNOWN = new Map<string, PayoutReportColumn>(
  (Object.entries(PAYOUT_REPORT_COLUMN_NAMES) as [PayoutReportColumn, string][]).flatMap(([column, name]) =>
    [name, ...(SYNONYMS[column] ?? [])].map((n) => [headerKey(n), column] as const),
  ),
);

/** The column a documented name (or synonym) stands for, in any spelling headerKey forgives. */
export const documentedColumn = (name: string): PayoutReportColumn | undefined => KNOWN.get(headerKey(name));

/** The column a file's header stands for: by the file's map (PAYOUT_REPORT_COLUMNS) first, else by its documented name. */
export function headerColumn(header: string, columns: Readonly<Record<string, string>> = {}): PayoutReportColumn | undefined {
  const key = headerKey(header);
  if (key === '') return undefined;
  for (const [ours, documented] of Object.entries(columns)) if (headerKey(ours) === key) return documentedColumn(documented);
  return KNOWN.get(key);
}

/**
 * Where each column sits in a header row: `columns` maps a file's own headers to documented names
 * (PAYOUT_REPORT_COLUMNS). A column named twice is refused, naming both headers.
 */
export function resolveHeader(cells: readonly string[], columns: Readonly<Record<string, string>> = {}): Map<PayoutReportColumn, { index: number; header: string }> | string {
  const found = new Map<PayoutReportColumn, { index: number; header: string }>();
  for (const [index, header] of cells.entries()) {
    const column = headerColumn(header, columns);
    if (column === undefined) continue;
    const earlier = found.get(column);
    if (earlier) return `two columns are ${PAYOUT_REPORT_COLUMN_NAMES[column]}: '${earlier.header}' and '${header}'`;
    found.set(column, { index, header });
  }
  return found;
}
