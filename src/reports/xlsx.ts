import writeXlsxFile, { type Cell as XlsxCell, type SheetData } from 'write-excel-file/node';
import { isNumeric, neutralise, spreadsheetText, type ReportShape } from './format.js';
import type { ReportRow } from './source.js';

/**
 * An XLSX workbook is built whole in memory (write-excel-file zips it at the end), so a download is
 * bounded; past this many rows the API answers 413 and points at CSV, which streams.
 */
export const XLSX_MAX_ROWS = 100_000;

const MONEY_FORMAT = '#,##0.00';
const CENTS_FORMAT = '#,##0';
const TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss';
const DATE_FORMAT = 'yyyy-mm-dd';
/** Characters a timestamp shows in TIME_FORMAT, a date in DATE_FORMAT. */
const TIME_WIDTH = 19;
const DATE_WIDTH = 10;
const MIN_WIDTH = 8;
/** Wide enough for any reference or UUID we write; longer free text (details, notes) wraps the view, not the file. */
const MAX_WIDTH = 80;

/** Words a header spells in capitals. */
const ACRONYMS: Readonly<Record<string, string>> = { id: 'ID', uuid: 'UUID', sepa: 'SEPA', api: 'API', ack: 'Acknowledgement', vat: 'VAT', iban: 'IBAN' };

/**
 * The header a person reads: `credited_amount` is "Credited amount", `amount_cents` "Amount (cents)",
 * `external_reference_id` "External reference ID". Only the XLSX carries these; CSV and JSON keep
 * the field names, which are the machine interface.
 */
export function readableHeader(column: string): string {
  const cents = column.endsWith('_cents');
  const words = (cents ? column.slice(0, -'_cents'.length) : column).split('_').filter((w) => w !== '');
  const text = words.map((w, i) => ACRONYMS[w] ?? (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' ');
  return cents ? `${text} (cents)` : text;
}

/**
 * Money in major units: a numeric column whose cents twin is in the same report (`amount` and
 * `amount_cents`, `credited_amount` and `credited_cents`, `net` and `net_cents`), or `difference`.
 */
function moneyColumns(shape: ReportShape): Set<string> {
  const all = new Set(shape.columns);
  const money = new Set<string>();
  for (const c of shape.columns) {
    if (!shape.numeric?.has(c) || c.endsWith('_cents')) continue;
    if (c === 'difference' || all.has(`${c}_cents`) || (c.endsWith('_amount') && all.has(`${c.slice(0, -'_amount'.length)}_cents`))) money.add(c);
  }
  return money;
}

/** `#,##0.00 "EUR"` for a row with an ISO 4217 currency, the plain two-decimal format otherwise. */
function moneyFormat(currency: unknown): string {
  return typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? `${MONEY_FORMAT} "${currency}"` : MONEY_FORMAT;
}

/**
 * What write-excel-file 4 removes from a cell's text (its removeInvalidXmlCharacters): C0 controls
 * but tab, line feed and carriage return; U+007F-U+009F but U+0085; U+FFFD; lone surrogates;
 * noncharacters (U+FDD0-U+FDEF and the last two code points of every plane).
 */
const DROPPED_BY_WRITER = /[\0-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFD]|\p{Cs}|\p{Noncharacter_Code_Point}/gu;

/**
 * Whether a spreadsheet shows a decimal text as written once it is a number: an integer up to 2^53
 * (cents, counts), a decimal of at most 15 significant digits (what a double keeps and what
 * LibreOffice and Excel show of a number; 123456789012345.67 would show as 123456789012346).
 */
function exactAsNumber(text: string): boolean {
  if (!text.includes('.')) return Number.isSafeInteger(Number(text));
  return text.replace(/[-.]/g, '').replace(/^0+/, '').length <= 15;
}

function cell(column: string, row: ReportRow, shape: ReportShape, money: ReadonlySet<string>): XlsxCell {
  const value = row[column];
  if (value === null || value === undefined || value === '') return null;
  const text = String(value);
  const numeric = isNumeric(shape, column, row);
  const currency = row['currency'];
  // A value a spreadsheet number (a double) would change stays text, exact: an integer beyond 2^53,
  // a decimal amount of more significant digits than a double holds (92233720368547758.07 showed
  // as 92,233,720,368,547,800.00).
  if (numeric && /^-?\d+(\.\d+)?$/.test(text) && exactAsNumber(text)) {
    if (money.has(column)) return { value: Number(text), type: Number, format: moneyFormat(currency) };
    return column.endsWith('_cents') ? { value: Number(text), type: Number, format: CENTS_FORMAT } : { value: Number(text), type: Number };
  }
  if (shape.timestamps?.has(column)) {
    const at = new Date(text);
    if (!Number.isNaN(at.getTime())) return { value: at, type: Date, format: TIME_FORMAT };
  }
  // A day is that day's midnight UTC: write-excel-file counts a Date's serial from its UTC time, so
  // the cell holds the whole day number, with no time of day to shift it in another zone.
  if (shape.dates?.has(column) && /^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const day = new Date(`${text}T00:00:00Z`);
    if (!Number.isNaN(day.getTime())) return { value: day, type: Date, format: DATE_FORMAT };
  }
  // Written as a string cell (never a formula), and neutralised too: a workbook re-saved as CSV
  // must not turn a hostile reference into a formula then. Neutralised as written: the writer drops
  // the characters XML cannot hold or discourages, so a U+0001 or U+FFFD before a sign would go
  // after the check, and the cell would start with the sign.
  const written = text.replace(DROPPED_BY_WRITER, '');
  return { value: numeric ? spreadsheetText(written, true) : neutralise(written), type: String };
}

/** Characters a cell shows: its text, money with thousands separators, decimals and the currency code. */
function shownLength(cell: XlsxCell): number {
  if (cell === null || cell === undefined) return 0;
  if (typeof cell !== 'object' || !('value' in cell)) return String(cell).length;
  const c = cell as { value: unknown; type?: unknown; format?: string };
  if (c.type === Date) return c.format === DATE_FORMAT ? DATE_WIDTH : TIME_WIDTH;
  const text = String(c.value);
  if (c.type !== Number) return Math.max(...text.split('\n').map((l) => l.length));
  const digits = text.replace(/^-/, '').split('.')[0]!.length;
  const separators = c.format ? Math.floor((digits - 1) / 3) : 0;
  const decimals = c.format?.startsWith(MONEY_FORMAT) ? 3 : text.includes('.') ? text.length - text.indexOf('.') : 0;
  const suffix = c.format?.startsWith(`${MONEY_FORMAT} "`) ? 4 : 0;
  return (text.startsWith('-') ? 1 : 0) + digits + separators + decimals + suffix;
}

/** One sheet: a bold row of readable headers, then the rows in the report's order; frozen header, widths fit to the content. */
export async function renderXlsx(shape: ReportShape, rows: readonly ReportRow[], sheet: string): Promise<Buffer> {
  const money = moneyColumns(shape);
  const headers = shape.columns.map(readableHeader);
  const data: SheetData = [headers.map((h) => ({ value: h, type: String, fontWeight: 'bold' as const }))];
  const widths = headers.map((h) => h.length);
  for (const row of rows) {
    const cells = shape.columns.map((c) => cell(c, row, shape, money));
    cells.forEach((c, i) => { widths[i] = Math.max(widths[i]!, shownLength(c)); });
    data.push(cells);
  }
  // A little over the characters: bold headers and proportional fonts run wider than the count.
  const columns = widths.map((w) => ({ width: Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, Math.ceil(w * 1.1) + 2)) }));
  return writeXlsxFile(data, { sheet, columns, stickyRowsCount: 1 }).toBuffer();
}
