import { amountParts, decimalEvidence, rateParts, splitAmount, type DecimalSeparator, type PayoutCurrency } from './amounts.js';
import { AMOUNT_COLUMNS, documentedColumn, PAYOUT_REPORT_COLUMN_NAMES, REQUIRED_COLUMNS, resolveHeader, type AmountColumn, type PayoutReportColumn } from './columns.js';
import { numberParts, percentMicros, scaled, type DecimalParts } from './decimal.js';
import { cellText, type Cell, type GridRow } from './grid.js';
import { PayoutReportFormatError, type PayoutDocType, type PayoutReportRow } from './types.js';
import { isStorableText, UNSTORABLE_TEXT } from '../db/text.js';

/** Rows a provider or spreadsheet may put above the header (a title, the period, a blank line). */
const HEADER_SEARCH_ROWS = 20;
/**
 * The longest reference or other text a cell may hold: Doc No and the payout's reference are index
 * keys, which Postgres refuses past about 2,700 bytes; the documents' numbers are far shorter.
 */
const MAX_TEXT = 200;
/** The ledger stores cents as a Postgres bigint. */
const MAX_CENTS = 9_223_372_036_854_775_807n;

const DOC_TYPES: Readonly<Record<string, PayoutDocType>> = { invoice: 'invoice', creditnote: 'credit_note', buyerpayment: 'buyer_payment', dispute: 'dispute' };
const docTypeKey = (text: string) => text.toLowerCase().replace(/[\s_-]+/g, '');

type Located = Map<PayoutReportColumn, { index: number; header: string }>;

/** Turns a grid into report rows: header found, decimal separator decided, every cell checked. */
export function reportRows(grid: readonly GridRow[], columns: Readonly<Record<string, string>>, options: { separated?: boolean } = {}): PayoutReportRow[] {
  for (const [ours, documented] of Object.entries(columns)) {
    if (!documentedColumn(documented)) throw new PayoutReportFormatError(`the column map sends '${ours}' to '${documented}', which is no documented column`);
  }
  const { header, at } = findHeader(grid, columns);
  const data = grid.filter((row) => row.line > header.line && row.cells.some((c) => textOf(c) !== ''));
  // In a CSV, a value past the header's last column: a separator inside an unquoted value (a decimal
  // comma in a ',' file) moved every cell after it one column on, and the row would be read shifted.
  // A spreadsheet's cells have their own columns: a note beside the report is no such sign.
  const named = header.cells.reduce<number>((last, cell, i) => (textOf(cell) !== '' ? i : last), -1);
  for (const row of options.separated ? data : []) {
    const past = row.cells.findIndex((cell, i) => i > named && textOf(cell) !== '');
    if (past >= 0) {
      throw new PayoutReportFormatError(
        `line ${row.line}: ${row.cells.length} cells, a value in column ${past + 1} where the header on line ${header.line} names ${named + 1}: ` +
          'a separator inside an unquoted value (a decimal comma in a comma-separated file)?',
      );
    }
  }
  const cellOf = (row: GridRow, column: PayoutReportColumn): Cell => {
    const place = at.get(column);
    return place === undefined ? null : (row.cells[place.index] ?? null);
  };
  const refuse = (row: GridRow, column: PayoutReportColumn, problem: string) => {
    const header = at.get(column)!.header;
    const documented = PAYOUT_REPORT_COLUMN_NAMES[column];
    const named = header.trim() === documented ? `'${documented}'` : `'${header.trim()}' (${documented})`;
    return new PayoutReportFormatError(`line ${row.line}, column ${named}: ${problem}`);
  };
  const decimal = decimalSeparator(data, cellOf, refuse);
  return data.map((row) => readRow(row, decimal, cellOf, refuse));
}

function textOf(cell: Cell): string {
  const text = cellText(cell);
  return typeof text === 'string' ? text.trim() : '?';
}

/**
 * The header is the row among the first ones naming the most documented columns; a file whose best
 * row lacks a required column is refused naming what is missing.
 */
function findHeader(grid: readonly GridRow[], columns: Readonly<Record<string, string>>): { header: GridRow; at: Located } {
  let best: { header: GridRow; at: Located | string; size: number } | null = null;
  for (const row of grid.slice(0, HEADER_SEARCH_ROWS)) {
    const at = resolveHeader(row.cells.map((c) => (textOf(c) === '?' ? '' : textOf(c))), columns);
    const size = typeof at === 'string' ? Number.MAX_SAFE_INTEGER : at.size;
    if (size > 0 && (best === null || size > best.size)) best = { header: row, at, size };
  }
  if (best === null) {
    const names = REQUIRED_COLUMNS.map((c) => PAYOUT_REPORT_COLUMN_NAMES[c]).join(', ');
    throw new PayoutReportFormatError(`no header row naming the documented columns (${names}) in the first ${HEADER_SEARCH_ROWS} rows`);
  }
  const { header, at } = best;
  if (typeof at === 'string') throw new PayoutReportFormatError(`header on line ${header.line}: ${at}`);
  const missing = REQUIRED_COLUMNS.filter((c) => !at.has(c)).map((c) => `'${PAYOUT_REPORT_COLUMN_NAMES[c]}'`);
  if (missing.length > 0) {
    throw new PayoutReportFormatError(`missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (header on line ${header.line})`);
  }
  return { header, at };
}

type CellOf = (row: GridRow, column: PayoutReportColumn) => Cell;
type Refuse = (row: GridRow, column: PayoutReportColumn, problem: string) => PayoutReportFormatError;

/**
 * One decimal separator for the whole file, from the amounts that show it ('1.234,56', '12,5');
 * an amount using the other one is refused rather than read a thousand times too large or small.
 */
function decimalSeparator(rows: readonly GridRow[], cellOf: CellOf, refuse: Refuse): DecimalSeparator | null {
  let decided: { separator: DecimalSeparator; row: GridRow; column: AmountColumn } | null = null;
  for (const row of rows) {
    for (const column of AMOUNT_COLUMNS) {
      const cell = cellOf(row, column);
      if (typeof cell !== 'string' || cell.trim() === '') continue;
      const split = splitAmount(cell);
      if (typeof split === 'string') throw refuse(row, column, `'${cell.trim()}' ${split}`);
      const separator = decimalEvidence(split.body);
      if (separator === null) continue;
      if (decided === null) decided = { separator, row, column };
      else if (decided.separator !== separator) {
        const where = `line ${decided.row.line}, column '${PAYOUT_REPORT_COLUMN_NAMES[decided.column]}'`;
        throw refuse(row, column, `'${cell.trim()}' has the decimal separator '${separator}', but ${where} has '${decided.separator}'`);
      }
    }
  }
  return decided?.separator ?? null;
}

function readRow(row: GridRow, decimal: DecimalSeparator | null, cellOf: CellOf, refuse: Refuse): PayoutReportRow {
  const text = (column: PayoutReportColumn): string => {
    const value = cellText(cellOf(row, column));
    if (typeof value !== 'string') throw refuse(row, column, `holds ${value.unreadable}, not text`);
    const trimmed = value.trim();
    if (!isStorableText(trimmed)) throw refuse(row, column, `holds ${UNSTORABLE_TEXT}`);
    if (trimmed.length > MAX_TEXT) throw refuse(row, column, `is ${trimmed.length} characters long, more than ${MAX_TEXT}`);
    return trimmed;
  };
  const docNo = text('docNo');
  if (docNo === '') throw refuse(row, 'docNo', 'is empty');
  const docTypeText = text('docType');
  const docType = DOC_TYPES[docTypeKey(docTypeText)];
  if (docType === undefined) throw refuse(row, 'docType', `'${docTypeText}' is none of invoice, credit note, buyer payment, dispute`);

  const currencies = new Map<PayoutCurrency, PayoutReportColumn>();
  const amount = (column: AmountColumn): bigint => {
    const { cents, currency } = amountCell(cellOf(row, column), decimal, (problem) => refuse(row, column, problem));
    if (currency !== null && !currencies.has(currency)) currencies.set(currency, column);
    return cents;
  };
  const cents = Object.fromEntries(AMOUNT_COLUMNS.map((c) => [c, amount(c)])) as Record<AmountColumn, bigint>;
  const currency = rowCurrency(text('currency'), currencies, (column, problem) => refuse(row, column, problem));
  // Credit notes, buyer payments and disputes always reduce the payout, whichever sign a report
  // uses. A row written as positive amounts is turned whole, so a row that adds up in the file still
  // adds up (a credit note of 20.00 refunding 0.60 of fee transfers -19.40, with Discount -0.60);
  // then the three amounts that carry the document's value are negative whatever sign they had.
  const turned = docType !== 'invoice' && (cents.grossPurchasePrice > 0n || (cents.grossPurchasePrice === 0n && cents.transactionAmount > 0n));
  if (turned) for (const column of AMOUNT_COLUMNS) cents[column] = -cents[column];
  const reducing = (value: bigint) => (docType === 'invoice' || value <= 0n ? value : -value);
  const rate = (column: 'discountRate' | 'mdrRate') => rateCell(cellOf(row, column), (problem) => refuse(row, column, problem));
  return {
    line: row.line,
    payoutReference: text('payoutReference') || null,
    orderNo: text('orderNo') || null,
    docNo,
    docType,
    currency,
    transactionAmountCents: reducing(cents.transactionAmount),
    discountRateMicros: rate('discountRate'),
    mdrRateMicros: rate('mdrRate'),
    transactionFeeCents: cents.transactionFee,
    grossPurchasePriceCents: reducing(cents.grossPurchasePrice),
    discountCents: cents.discount,
    vatOnDiscountCents: cents.vatOnDiscount,
    transferAmountCents: reducing(cents.transferAmount),
    totalDeductionsCents: cents.totalDeductions,
  };
}

/** An amount cell in cents: text with the file's decimal separator, or a number by its exact digits. */
function amountCell(cell: Cell, decimal: DecimalSeparator | null, refuse: (problem: string) => Error): { cents: bigint; currency: PayoutCurrency | null } {
  if (cell === null || (typeof cell === 'string' && cell.trim() === '')) throw refuse('is empty');
  if (typeof cell !== 'string' && 'unreadable' in cell) throw refuse(`holds ${cell.unreadable}, not an amount`);
  const shown = typeof cell === 'string' ? cell.trim() : cell.number;
  let currency: PayoutCurrency | null = null;
  let parts;
  if (typeof cell === 'string') {
    const split = splitAmount(cell);
    if (typeof split === 'string') throw refuse(`'${shown}' ${split}`);
    currency = split.currency;
    parts = amountParts(split, decimal);
  } else {
    parts = numberParts(Number(cell.number)) ?? 'is not a finite number';
  }
  if (typeof parts === 'string') throw refuse(`'${shown}' ${parts}`);
  const cents = scaled(parts, 2);
  if (typeof cents === 'string') throw refuse(`'${shown}' ${cents}`);
  if (cents > MAX_CENTS || cents < -MAX_CENTS) throw refuse(`'${shown}' is beyond the largest amount the ledger stores`);
  return { cents, currency };
}

/** A rate cell in micros of a percent; an empty cell (or an absent column) is null. */
function rateCell(cell: Cell, refuse: (problem: string) => Error): number | null {
  if (cell === null || (typeof cell === 'string' && cell.trim() === '')) return null;
  if (typeof cell !== 'string' && 'unreadable' in cell) throw refuse(`holds ${cell.unreadable}, not a percent`);
  const shown = typeof cell === 'string' ? cell.trim() : cell.percent ? `${cell.number} (shown as a percentage)` : cell.number;
  // A cell shown as a percentage stores the fraction: 0.029 is 2.9 %.
  const parts = typeof cell === 'string' ? rateParts(cell) : numberParts(Number(cell.number));
  const micros = percentMicros(typeof cell !== 'string' && cell.percent ? hundredfold(parts) : parts);
  if (typeof micros === 'string') throw refuse(`'${shown}' ${micros}`);
  return micros;
}

/** The decimal times 100, exactly: the decimal point two places right. */
function hundredfold(parts: DecimalParts | null): DecimalParts | null {
  if (parts === null) return null;
  const fraction = parts.fraction.padEnd(2, '0');
  return { negative: parts.negative, units: `${parts.units}${fraction.slice(0, 2)}`.replace(/^0+(?=\d)/, ''), fraction: fraction.slice(2) };
}

/** The row's currency: its Currency cell, else the one its amounts name; a disagreement is refused. */
function rowCurrency(stated: string, named: Map<PayoutCurrency, PayoutReportColumn>, refuse: (column: PayoutReportColumn, problem: string) => Error): PayoutCurrency | null {
  const [first, second] = [...named];
  if (second) throw refuse(second[1], `names ${second[0]}, but column '${PAYOUT_REPORT_COLUMN_NAMES[first![1]]}' names ${first![0]}`);
  let currency: PayoutCurrency | null = null;
  if (stated !== '') {
    const key = stated.toUpperCase();
    if (key === 'EUR' || key === '€') currency = 'EUR';
    else if (key === 'GBP' || key === '£') currency = 'GBP';
    else throw refuse('currency', `'${stated}' is neither EUR nor GBP`);
  }
  if (currency !== null && first && first[0] !== currency) throw refuse(first[1], `names ${first[0]}, but the row's Currency is ${currency}`);
  return currency ?? first?.[0] ?? null;
}
