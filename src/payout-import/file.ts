import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { importPayoutReport, PayoutReportRefusedError, type PayoutReportImportResult } from './import.js';
import { PayoutReportFormatError, readPayoutReport } from '../payout-reports/read.js';

/** A file read, parsed and imported: what the command and the inbox share. */
export async function importPayoutReportFile(
  database: Database,
  environment: ProviderEnvironment,
  file: string,
  options: { columns?: Record<string, string> } = {},
): Promise<PayoutReportImportResult> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new PayoutReportFormatError(`unreadable: ${(error as Error).message}`);
  }
  const report = await readPayoutReport(bytes, options.columns ? { columns: options.columns } : undefined);
  return importPayoutReport(database, environment, report, { fileName: path.basename(file) });
}

/** The refusals that are the file's fault (bad format, no payout fits): reported, not logged as errors. */
export function isRefusal(error: unknown): boolean {
  return error instanceof PayoutReportFormatError || error instanceof PayoutReportRefusedError;
}

/** "FILE: …" result line of one imported file. */
export function describeImport(file: string, r: PayoutReportImportResult): string {
  return `${file}: format ${r.format}, rows ${r.rows}, rows new ${r.rowsNew}, payouts ${r.payouts.join(' ') || '-'}${r.alreadyImported ? ' (file already imported)' : ''}`;
}
