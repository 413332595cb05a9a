import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import writeXlsxFile, { type Cell, type SheetData } from 'write-excel-file/node';
import type { PayoutRecord } from '../model.js';
import type { ReportForm } from './forms.js';
import { formatMoney, formatRate, reportTable, type ReportCell } from './table.js';

export { reportForm, type ReportForm } from './forms.js';
export { formatMoney, formatRate, reportTable } from './table.js';

export type PayoutReportFormat = 'csv' | 'xlsx' | 'both';

function text(cell: ReportCell, form: ReportForm, currency: string): string {
  if ('text' in cell) return cell.text;
  if ('cents' in cell) return formatMoney(cell.cents, form, currency);
  return formatRate(cell.micros, form);
}

/** RFC 4180: a field holding the separator, a quote or a line break is quoted. */
function field(value: string, separator: string): string {
  return value.includes(separator) || /["\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** CSV with `;` when amounts carry a decimal comma, `,` otherwise; CRLF. */
export function payoutReportCsv(payout: PayoutRecord, currency: string, form: ReportForm): string {
  const table = reportTable(payout, currency, form);
  const separator = form.decimal === ',' ? ';' : ',';
  const lines = [table.header, ...table.rows.map((row) => row.map((c) => text(c, form, currency)))].map((cells) => cells.map((c) => field(c, separator)).join(separator));
  return `${lines.join('\r\n')}\r\n`;
}

/** XLSX, one sheet; amounts and rates as number cells (shown to the cent) or as the CSV's text. */
export async function payoutReportXlsx(payout: PayoutRecord, currency: string, form: ReportForm): Promise<Buffer> {
  const table = reportTable(payout, currency, form);
  const cell = (c: ReportCell): Cell => {
    if (!form.xlsxNumbers || 'text' in c) return { value: text(c, form, currency), type: String };
    // Cents and rates well below 2^53: the double is the decimal a spreadsheet would hold.
    if ('cents' in c) return { value: Number(c.cents) / 100, type: Number, format: '#,##0.00' };
    return { value: c.micros / 10_000, type: Number, format: '0.0###' };
  };
  const data: SheetData = [table.header.map((h) => ({ value: h, type: String, fontWeight: 'bold' as const })), ...table.rows.map((row) => row.map(cell))];
  return writeXlsxFile(data, { sheet: 'Payout report' }).toBuffer();
}

/**
 * One file per completed payout that has a report (`<env>-payout-<sepa_instruction_id>.<ext>`);
 * returns the paths written.
 */
export async function writePayoutReportFiles(
  dir: string,
  env: string,
  payouts: readonly PayoutRecord[],
  currency: string,
  form: ReportForm,
  format: PayoutReportFormat = 'both',
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const payout of payouts) {
    if (payout.status !== 'complete' || payout.report === null) continue;
    const base = path.join(dir, `${env}-payout-${payout.sepaInstructionId}`);
    if (format !== 'xlsx') {
      await writeFile(`${base}.csv`, payoutReportCsv(payout, currency, form), 'utf8');
      files.push(`${base}.csv`);
    }
    if (format !== 'csv') {
      await writeFile(`${base}.xlsx`, await payoutReportXlsx(payout, currency, form));
      files.push(`${base}.xlsx`);
    }
  }
  return files;
}
