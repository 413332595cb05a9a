import writeXlsxFile, { type Cell as XlsxCell, type SheetData } from 'write-excel-file/node';
import { neutralise, spreadsheetText, type ReportShape } from './format.js';
import type { ReportRow } from './source.js';

/**
 * An XLSX workbook is built whole in memory (write-excel-file zips it at the end), so a download is
 * bounded; past this many rows the API answers 413 and points at CSV, which streams.
 */
export const XLSX_MAX_ROWS = 100_000;

const MONEY_FORMAT = '#,##0.00';
const TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss';

/** Columns whose numbers are money in major units (decimal amounts), shown with two decimals. */
const isAmount = (column: string) => column === 'amount' || column.endsWith('_amount') || column === 'difference';

function cell(column: string, value: unknown, shape: ReportShape): XlsxCell {
  if (value === null || value === undefined || value === '') return null;
  const text = String(value);
  if (shape.numeric?.has(column) && /^-?\d+(\.\d+)?$/.test(text)) {
    // Cents and counts are integers below 2^53 (exact); a decimal amount of two digits is what a
    // spreadsheet holds anyway: it is shown rounded to the cent by the format.
    return isAmount(column) ? { value: Number(text), type: Number, format: MONEY_FORMAT } : { value: Number(text), type: Number };
  }
  if (shape.timestamps?.has(column)) {
    const at = new Date(text);
    if (!Number.isNaN(at.getTime())) return { value: at, type: Date, format: TIME_FORMAT };
  }
  // Written as a string cell (never a formula), and neutralised too: a workbook re-saved as CSV
  // must not turn a hostile reference into a formula then.
  return { value: shape.numeric?.has(column) ? spreadsheetText(text, true) : neutralise(text), type: String };
}

/** One sheet: a bold header row, then the rows in the report's order; frozen header, column widths. */
export async function renderXlsx(shape: ReportShape, rows: readonly ReportRow[], sheet: string): Promise<Buffer> {
  const data: SheetData = [shape.columns.map((c) => ({ value: c, type: String, fontWeight: 'bold' as const }))];
  for (const row of rows) data.push(shape.columns.map((c) => cell(c, row[c], shape)));
  const columns = shape.columns.map((c) => ({ width: shape.timestamps?.has(c) ? 20 : Math.min(40, Math.max(10, c.length + 2)) }));
  return writeXlsxFile(data, { sheet, columns, stickyRowsCount: 1 }).toBuffer();
}
