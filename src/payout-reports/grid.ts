import { TextDecoder } from 'node:util';
import { parse } from 'csv-parse/sync';
import { readSheet } from 'read-excel-file/node';
import { boundedXlsx, columnName } from './xlsx-limits.js';

/**
 * A payout report file as a grid of cells, each row with its line (CSV) or row number (XLSX), before
 * any column means anything. A number cell keeps the digits the file stores: read.ts turns them into
 * cents exactly.
 */
/** A number cell shown as a percentage stores the fraction (xlsx-limits.ts): `percent` says so. */
export type Cell = string | null | { number: string; percent?: true } | { unreadable: string };
export interface GridRow {
  line: number;
  cells: Cell[];
}

/** XLSX files are zip archives: 'PK\x03\x04'. */
export const isZip = (bytes: Uint8Array): boolean => bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
/** The compound file of Excel 97-2003 (.xls). */
export const isLegacyExcel = (bytes: Uint8Array): boolean => bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0;

// Windows-1252's printable characters at 0x80-0x9F (the rest of the code page is Latin-1). Node
// 20's TextDecoder('windows-1252') decodes these bytes as Latin-1's control characters (0x80 ->
// U+0080, not the euro sign), so they are mapped here.
const CP1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * UTF-16 with its byte order mark (Excel's "Unicode Text", LibreOffice's UTF-16 CSV); else UTF-8
 * (BOM or not) when valid, else Windows-1252, the code page of older spreadsheet CSV exports ('€'
 * is 0x80). Read as Windows-1252, a UTF-16 file's every other byte was a NUL in its cells.
 */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
  }
}

/** A line's cells split at `delimiter` outside quotes (enough to recognise a header). */
function splitLine(line: string, delimiter: string): string[] {
  const cells = [''];
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === delimiter) cells.push('');
    else cells[cells.length - 1] += c;
  }
  return cells;
}

/**
 * The separator of a CSV: ',' or ';', whichever splits one of the first lines into more columns
 * `isHeader` recognises (a title line may come before the header, and a ';' file's amounts carry
 * decimal commas, so counting separators alone could choose wrongly); with no header in sight,
 * whichever the first line holds more of.
 */
export function csvDelimiter(text: string, isHeader: (cell: string) => boolean): ',' | ';' {
  const lines = text.split(/\r?\n/, 200).filter((l) => l.trim() !== '').slice(0, 20);
  const score = (d: string) => Math.max(0, ...lines.map((l) => splitLine(l, d).filter(isHeader).length));
  const [commas, semicolons] = [score(','), score(';')];
  if (commas !== semicolons) return semicolons > commas ? ';' : ',';
  const first = lines[0] ?? '';
  return splitLine(first, ';').length > splitLine(first, ',').length ? ';' : ',';
}

/** RFC 4180 rows by csv-parse; a row's line is where it starts (a quoted cell may span lines). */
export function csvGrid(bytes: Uint8Array, isHeader: (cell: string) => boolean): GridRow[] | string {
  // Records and quoted line breaks as LF alone: csv-parse counts a CRLF inside quotes as two lines,
  // so the rows after such a cell were given (and quoted findings with) a line one too far.
  const text = decodeText(bytes).replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // With `info`, csv-parse returns each record beside its position (its types describe the plain call).
    records = parse(text, { delimiter: csvDelimiter(text, isHeader), info: true, relax_column_count: true, skip_empty_lines: true }) as unknown as typeof records;
  } catch (error) {
    return `not a readable CSV file: ${(error as Error).message}`;
  }
  return records.map(({ record, info }) => ({
    line: info.lines - record.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0),
    cells: record,
  }));
}

/** A number cell's digits as the file stores them, kept apart from text cells. */
class XlsxNumber {
  constructor(readonly text: string) {}
}

/**
 * The first sheet of an XLSX. Numbers are kept as the file's text until read.ts reads them (a Doc No
 * stored as a number of 20 digits would lose its last ones as a double); dates and booleans are no
 * payout report's values and are named, not guessed at. A workbook larger than a payout report can
 * be is refused before read-excel-file reads it (xlsx-limits.ts).
 */
export async function xlsxGrid(bytes: Uint8Array): Promise<GridRow[] | string> {
  const workbook = await boundedXlsx(bytes);
  if (typeof workbook === 'string') return workbook;
  let data: unknown[][];
  try {
    data = await readSheet<XlsxNumber>(workbook.zip, { parseNumber: (text) => new XlsxNumber(text), trim: false });
  } catch (error) {
    return `not a readable XLSX file: ${(error as Error).message}`;
  }
  // read-excel-file gives row n of the sheet at index n - 1, from column A.
  return data.map((row, index) => ({
    line: index + 1,
    cells: row.map((cell, column): Cell => {
      if (cell === null || cell === undefined) return null;
      if (typeof cell === 'string') return cell;
      if (cell instanceof XlsxNumber) return workbook.percentCells.has(`${columnName(column + 1)}${index + 1}`) ? { number: cell.text, percent: true } : { number: cell.text };
      if (cell instanceof Date) return { unreadable: 'a date' };
      if (typeof cell === 'boolean') return { unreadable: 'a TRUE/FALSE value' };
      return { unreadable: `a value of type ${typeof cell}` };
    }),
  }));
}

/** The text of a cell meant as text (Doc No, Doc Type ...): an integer as stored, another number as its shortest digits. */
export function cellText(cell: Cell): string | { unreadable: string } {
  if (cell === null) return '';
  if (typeof cell === 'string' || 'unreadable' in cell) return cell;
  return /^-?\d+$/.test(cell.number) ? cell.number : String(Number(cell.number));
}
