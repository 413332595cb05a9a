import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Shutdown } from '../lifecycle/shutdown.js';
import type { Logger } from '../log/logger.js';
import { startFileInbox, type InboxOptions, type StatementInbox } from '../statements/inbox.js';
import { describeImport, importPayoutReportFile } from './file.js';
import { PayoutReportImportStoppedError, PayoutReportImportTimeoutError, type PayoutReportImportResult } from './import.js';

/**
 * The payout report inbox, RECON_DATA_DIR/payout-inbox beside the statements' inbox, run by the
 * same mechanism (statements/inbox.ts startFileInbox): every minute each settled file is imported
 * (payout-reports/file.ts) and moved to payout-inbox/imported/, or to payout-inbox/failed/ with a
 * <name>.error holding the reason (not a payout report, no payout fits it, larger than
 * PAYOUT_REPORT_MAX_FILE_BYTES, a symlink or not a regular file, ...). An unreachable
 * database, or an import stopped past PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (a lock held on a
 * table it writes: not the file's fault), leaves the file for the next scan. So does the daemon's
 * stop: it cancels an import in progress (rolled back, nothing of the file stored) instead of
 * waiting for it, which an import behind a lock made last until that timeout.
 */
export function startPayoutReportInbox(
  ctx: { config: Pick<Config, 'RECON_DATA_DIR' | 'PROVIDER_ENV'> & Partial<Pick<Config, 'PAYOUT_REPORT_COLUMNS' | 'PAYOUT_REPORT_MAX_FILE_BYTES' | 'PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS'>>; log: Logger; database: Database; shutdown: Shutdown },
  options: InboxOptions = {},
): StatementInbox<PayoutReportImportResult> {
  const log = ctx.log.child({ component: 'payout-report-inbox' });
  return startFileInbox(
    ctx,
    {
      name: 'payout-report-inbox',
      folder: 'payout-inbox',
      // Opened without following a symlink and refused unless a regular file no larger than
      // PAYOUT_REPORT_MAX_FILE_BYTES, before it is read: the report is parsed in the daemon's own process.
      importOne: (file) =>
        importPayoutReportFile(ctx.database, ctx.config.PROVIDER_ENV, file, {
          columns: ctx.config.PAYOUT_REPORT_COLUMNS ?? {}, noFollow: true, ...(ctx.config.PAYOUT_REPORT_MAX_FILE_BYTES ? { maxFileBytes: ctx.config.PAYOUT_REPORT_MAX_FILE_BYTES } : {}),
          ...(ctx.config.PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS ? { timeoutSeconds: ctx.config.PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS } : {}),
          // The shutdown's signal, as the statement inbox's imports take it: it also stops this job
          // (startFileInbox's stopOn), which then waits for the import.
          signal: ctx.shutdown.signal,
        }),
      deferReason: (error) => {
        if (error instanceof PayoutReportImportTimeoutError) return `payout report import stopped: ${error.message}; retried at the next scan`;
        if (error instanceof PayoutReportImportStoppedError) return 'payout report import stopped by shutdown: nothing of the file was stored; retried at the next start';
        return undefined;
      },
      imported: (result, name) => log.info({ file: name, rows: result.rows, rowsNew: result.rowsNew, payouts: result.payouts }, describeImport(name, result)),
    },
    options,
  );
}
