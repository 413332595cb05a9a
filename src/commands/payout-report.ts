import { withContext, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { describeImport, importPayoutReportFile, isRefusal } from '../payout-import/file.js';
import { printable } from '../log/printable.js';

const HELP = `Usage: bnpl-recon payout-report import FILE...

Imports the provider's payout reports (CSV or XLSX, as downloaded from the provider's portal) into
the ledger of PROVIDER_ENV. Columns are found by their documented names (Order No, Doc No, Doc
Type, Transaction Amount, Discount %, MDR %, Transaction Fee, Gross Purchase Price, Discount, VAT
on Discount, Transfer Amount, Total Deductions; optional Payout Reference and Currency). Each
file's rows are tied to a payout: by the Payout Reference column (a payout's SEPA reference or
uuid) where the file has one, else by the one payout whose listed invoices and amount the file
matches exactly. A file is stored whole or not at all: a missing column, a reference naming no
payout, or rows that fit no payout or several refuse it, naming the problem. Re-importing a file,
or another file about the same payout, adds nothing already held.

Prints one result line per file on stdout, "FILE: format F, rows N, rows new M, payouts UUID..."
or "FILE: failed: REASON" (the reason also on stderr), then a summary line. One failing file does
not stop the others. Exit status 0 when every file was imported (or had been before), 1 when any
failed, 2 for bad usage.`;

export const command: Command = {
  summary: "import the provider's payout reports (CSV, XLSX)",
  help: HELP,
  async run(argv) {
    const [sub, ...files] = argv;
    if (sub !== 'import') throw new UsageError(sub === undefined ? 'missing subcommand: payout-report import FILE...' : `unknown subcommand '${sub}'`);
    if (files.length === 0) throw new UsageError('payout-report import needs at least one FILE');
    const unknownOption = files.find((f) => f.startsWith('-'));
    if (unknownOption) throw new UsageError(`unknown option '${unknownOption}'`);
    return withContext('payout-report import', {}, async (ctx) => {
      let imported = 0;
      let rowsNew = 0;
      let failed = 0;
      for (const file of files) {
        try {
          const r = await importPayoutReportFile(ctx.database, ctx.config.PROVIDER_ENV, file, { columns: ctx.config.PAYOUT_REPORT_COLUMNS, maxFileBytes: ctx.config.PAYOUT_REPORT_MAX_FILE_BYTES, timeoutSeconds: ctx.config.PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS });
          imported += 1;
          rowsNew += r.rowsNew;
          process.stdout.write(`${describeImport(file, r)}\n`);
        } catch (error) {
          failed += 1;
          const reason = error instanceof Error ? error.message : String(error);
          process.stdout.write(`${file}: failed: ${printable(reason, '\n\t')}\n`);
          process.stderr.write(`bnpl-recon payout-report: ${file}: ${printable(reason, '\n\t')}\n`);
          if (!isRefusal(error)) ctx.log.error({ err: error, file }, 'payout report import failed');
        }
      }
      process.stdout.write(`files ${files.length}: imported ${imported}, failed ${failed}; rows new ${rowsNew}\n`);
      return failed > 0 ? 1 : 0;
    });
  },
};
