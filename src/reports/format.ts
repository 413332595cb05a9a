/** Report output formats (CONTRACT.md: `--format csv|json`, csv by default on the command line). */
export const REPORT_FORMATS = ['csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** The Content-Type an HTTP response carrying a report should declare. */
export function contentTypeFor(format: ReportFormat): string {
  return format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/json; charset=utf-8';
}

export type Cell = string | number | null | undefined;

/**
 * What a report's columns hold, beyond text: `numeric` columns carry numbers our own SQL wrote (cents
 * as integer text, amounts as decimal text), `timestamps` ISO 8601 UTC instants, `dates` days
 * (`2026-03-03`). Everything else is text that may come from outside (webhooks, bank statements) and
 * is neutralised for spreadsheets.
 */
export interface ReportShape {
  columns: readonly string[];
  numeric?: ReadonlySet<string>;
  /**
   * Columns that hold a number in some rows only, and text in the others: numeric in a row when its
   * test says so. Discrepancies' expected and observed are cents or counts for some kinds and a
   * word, a state or a merchant's invoice reference (`000123`) for others: that text must stay text.
   */
  numericWhere?: Readonly<Record<string, (row: Readonly<Record<string, Cell>>) => boolean>>;
  timestamps?: ReadonlySet<string>;
  dates?: ReadonlySet<string>;
}

/** Whether the column holds a number in this row (ReportShape `numeric`, `numericWhere`). */
export function isNumeric(shape: ReportShape, column: string, row: Readonly<Record<string, Cell>>): boolean {
  return (shape.numeric?.has(column) ?? false) || (shape.numericWhere?.[column]?.(row) ?? false);
}

export const CSV_DELIMITERS = [',', ';', '\t'] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];

export interface CsvOptions {
  delimiter: CsvDelimiter;
  /** A UTF-8 byte-order mark first, so spreadsheets' default import reads UTF-8 (not Windows-1252). */
  bom: boolean;
}

export const DEFAULT_CSV: CsvOptions = { delimiter: ',', bom: false };

/** Names a delimiter may be given by on a command line or in a URL, besides the character itself. */
export function parseDelimiter(value: string | undefined): CsvDelimiter | undefined {
  if (value === undefined) return ',';
  const named: Record<string, CsvDelimiter> = { ',': ',', comma: ',', ';': ';', semicolon: ';', '\t': '\t', tab: '\t' };
  return named[value];
}

// OWASP "CSV Injection": a cell starting with one of these is read as a formula by spreadsheets
// (https://owasp.org/www-community/attacks/CSV_Injection). References come from webhooks and bank
// statements, so a text cell starting with one is prefixed with a single quote and shown as text.
// Spreadsheets also trim what comes before the sign: spaces, line feeds, a no-break or other
// Unicode space, a byte-order mark, a quote (`'=` and `"=` in a cell); and LibreOffice reads the
// full-width signs (＝ ＋ － ＠, as an IME types them) as the ASCII ones. Any run of those before a
// sign is skipped when looking for it, and so are the control characters a spreadsheet drops when
// it saves the file again (LibreOffice drops U+007F: "\u007f=2+2" re-saved as CSV was "=2+2").
const FORMULA_START = /^[\t\r\n]|^[\s\u00a0\u2000-\u200b\u3000\ufeff'"\0-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]*[=+\-@\uff1d\uff0b\uff0d\uff20]/u;
const NUMBER_TEXT = /^-?\d+(\.\d+)?$/;
const DECIMAL_TEXT = /^-?\d+\.\d+$/;

/** The OWASP rule for a text cell: a leading ' when it starts with = + - @ (after blanks or quotes, or full-width), tab, CR or LF. */
export function neutralise(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * A cell's text as a spreadsheet should see it: numbers we wrote pass as they are (a negative amount
 * stays a number); anything else is neutralised.
 */
export function spreadsheetText(value: string, numeric: boolean): string {
  return numeric && NUMBER_TEXT.test(value) ? value : neutralise(value);
}

/**
 * One RFC 4180 field: quoted when it holds the delimiter, a double quote, CR or LF, with inner
 * quotes doubled; null and undefined are empty fields. With `;`, the delimiter of locales that
 * write a decimal comma, a decimal number is written with one ('12,05'): a spreadsheet in such a
 * locale reads '12.05' as text (LibreOffice, German) or a date (Excel), so a column's sum was 0.
 */
export function csvField(value: Cell, delimiter: CsvDelimiter = ',', numeric = typeof value === 'number'): string {
  if (value === null || value === undefined) return '';
  let text = spreadsheetText(String(value), numeric);
  if (delimiter === ';' && numeric && DECIMAL_TEXT.test(text)) text = text.replace('.', ',');
  return text.includes(delimiter) || /["\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated as RFC 4180 asks. */
export function csvRecord(values: readonly Cell[], delimiter: CsvDelimiter = ',', numeric: readonly boolean[] = []): string {
  return `${values.map((v, i) => csvField(v, delimiter, numeric[i] ?? typeof v === 'number')).join(delimiter)}\r\n`;
}

/**
 * Renders a batch of rows. JSON is one array written in pieces: '[' before the first batch, ',' between
 * objects, ']' at the end (see streamReport), so a million rows never exist as one string. JSON keeps
 * values as they are (it is for programs); only CSV neutralises.
 */
export function renderBatch(
  format: ReportFormat,
  shape: ReportShape | readonly string[],
  rows: readonly Record<string, Cell>[],
  first: boolean,
  csv: CsvOptions = DEFAULT_CSV,
): string {
  const full: ReportShape = 'columns' in shape ? shape : { columns: shape };
  const { columns } = full;
  if (format === 'csv') {
    const numericAt = columns.map((c) => full.numeric?.has(c) ?? false);
    let out = '';
    for (const row of rows) {
      const numeric = full.numericWhere === undefined ? numericAt : columns.map((c) => isNumeric(full, c, row));
      out += csvRecord(columns.map((c) => row[c]), csv.delimiter, numeric);
    }
    return out;
  }
  let out = '';
  rows.forEach((row, i) => {
    const ordered: Record<string, Cell> = {};
    for (const c of columns) ordered[c] = row[c] ?? null;
    out += `${first && i === 0 ? '\n' : ',\n'}${JSON.stringify(ordered)}`;
  });
  return out;
}

/** The header (and BOM) a CSV report starts with. */
export function csvHeader(shape: ReportShape, csv: CsvOptions): string {
  return `${csv.bom ? '\uFEFF' : ''}${csvRecord(shape.columns, csv.delimiter)}`;
}
