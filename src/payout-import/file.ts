import path from 'node:path';
import { DEFAULT_PAYOUT_REPORT_MAX_FILE_BYTES, type ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { importPayoutReport, PayoutReportRefusedError, type PayoutReportImportResult } from './import.js';
import { PayoutReportFormatError, readPayoutReport } from '../payout-reports/read.js';
import { NotARegularFileError, openFileToImport } from '../statements/inbox-file.js';

export interface PayoutReportFileOptions {
  columns?: Record<string, string>;
  /** PAYOUT_REPORT_MAX_FILE_BYTES (its default when not given): a larger file is refused before it is read */
  maxFileBytes?: number;
  /**
   * The inbox, whose files anyone with write access to it places: a symlink is refused instead of
   * followed, and so is anything but a regular file (a pipe swapped in after the scan listed the
   * name is opened non-blocking, so it cannot hang the scan).
   */
  noFollow?: boolean;
  /** PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (its default when not given): see importPayoutReport */
  timeoutSeconds?: number;
  /** Stops the import (the daemon's shutdown): see importPayoutReport */
  signal?: AbortSignal;
}

/** A file read, parsed and imported: what the command, the upload and the inbox share. */
export async function importPayoutReportFile(
  database: Database,
  environment: ProviderEnvironment,
  file: string,
  options: PayoutReportFileOptions = {},
): Promise<PayoutReportImportResult> {
  const bytes = await readReportFile(file, options.maxFileBytes ?? DEFAULT_PAYOUT_REPORT_MAX_FILE_BYTES, options.noFollow ?? false);
  const report = await readPayoutReport(bytes, options.columns ? { columns: options.columns } : undefined);
  return importPayoutReport(database, environment, report, {
    fileName: path.basename(file),
    ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * The file's bytes, or a PayoutReportFormatError naming why not. One that the file system refused
 * keeps the error's code: the inbox takes ENOENT as a file another replica moved away.
 */
async function readReportFile(file: string, maxBytes: number, noFollow: boolean): Promise<Buffer> {
  const name = path.basename(file);
  const unreadable = (error: unknown) =>
    Object.assign(new PayoutReportFormatError(`unreadable: ${(error as Error).message}`), { code: (error as NodeJS.ErrnoException).code });
  let handle, info;
  try {
    ({ handle, stat: info } = await openFileToImport(file, noFollow));
  } catch (error) {
    if (error instanceof NotARegularFileError) throw new PayoutReportFormatError(error.message);
    throw unreadable(error);
  }
  try {
    const tooLarge = () => new PayoutReportFormatError(`${name}: larger than PAYOUT_REPORT_MAX_FILE_BYTES (${maxBytes} bytes); split the report or raise the setting`);
    if (info.size > maxBytes) throw tooLarge();
    // Read to the end, but never past the limit: the file may have grown since the stat, and a
    // pipe given to the command has no size.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) throw tooLarge();
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof PayoutReportFormatError) throw error;
    throw unreadable(error);
  } finally {
    await handle.close();
  }
}

/** The refusals that are the file's fault (bad format, no payout fits): reported, not logged as errors. */
export function isRefusal(error: unknown): boolean {
  return error instanceof PayoutReportFormatError || error instanceof PayoutReportRefusedError;
}

/** "FILE: …" result line of one imported file. */
export function describeImport(file: string, r: PayoutReportImportResult): string {
  return `${file}: format ${r.format}, rows ${r.rows}, rows new ${r.rowsNew}, payouts ${r.payouts.join(' ') || '-'}${r.alreadyImported ? ' (file already imported)' : ''}`;
}
