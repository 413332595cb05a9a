import { createHash } from 'node:crypto';
import { headerColumn } from './columns.js';
import { csvGrid, isLegacyExcel, isZip, xlsxGrid } from './grid.js';
import { reportRows } from './rows.js';
import { PayoutReportFormatError, type PayoutReportFile } from './types.js';

export { PayoutReportFormatError, type PayoutDocType, type PayoutReportFile, type PayoutReportRow } from './types.js';

export interface ReadPayoutReportOptions {
  /** A file's own headers mapped to documented column names (PAYOUT_REPORT_COLUMNS). */
  columns?: Readonly<Record<string, string>>;
}

/**
 * A payout report (provider-merchant-docs.md, "The payout report") read whole: CSV (',' or ';',
 * UTF-8 or Windows-1252) or XLSX (its first sheet), told apart by the bytes, not the file name.
 * Refused with a PayoutReportFormatError naming the missing column, or the line and column of the
 * first cell that is not what its column holds; nothing is read from a refused file.
 */
export async function readPayoutReport(bytes: Uint8Array, options: ReadPayoutReportOptions = {}): Promise<PayoutReportFile> {
  if (bytes.length === 0) throw new PayoutReportFormatError('the file is empty');
  if (isLegacyExcel(bytes)) throw new PayoutReportFormatError('an Excel 97-2003 (.xls) workbook: save it as XLSX or CSV');
  const format = isZip(bytes) ? 'xlsx' : 'csv';
  const columns = options.columns ?? {};
  const grid = format === 'xlsx' ? await xlsxGrid(bytes) : csvGrid(bytes, (cell) => headerColumn(cell, columns) !== undefined);
  if (typeof grid === 'string') throw new PayoutReportFormatError(grid);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { format, sha256, rows: reportRows(grid, columns, { separated: format === 'csv' }) };
}
