import { open } from 'node:fs/promises';
import { withContext, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { startProgress } from '../lifecycle/progress.js';
import { describeStatementImport, importLimits, importStatementFile, type ImportResult } from '../statements/import.js';
import { StatementFormatError } from '../statements/types.js';
import { csvSettings } from '../statements/csv-settings.js';
import type { CsvOptions } from '../statements/csv.js';
import { printable } from '../log/printable.js';

const HELP = `Usage: bnpl-recon statement import [--profile PROFILE.json] [--accept-unbalanced] FILE...

Imports bank statements of the merchant account into the ledger of PROVIDER_ENV. The format is
detected from the content, not the file name: CAMT.053 XML, MT940, or a bank's CSV export, read
by the bank profile its header (or first row) fits (docs/how-it-decides.md, "CSV profiles"); --profile adds a
profile file of your own, tried before the built-in ones (default: STATEMENT_CSV_PROFILE). A CSV
naming no currency takes its account's from STATEMENT_ACCOUNT_CURRENCIES, else is refused. Each file is imported in one transaction, and only if its statements balance (opening
balance + bookings = closing balance) and every booking was stored. A statement without an
opening or closing balance (and every CSV: an export carries none) is imported with its balances not checked.
--accept-unbalanced stores a statement whose balances disagree anyway, opening a
statement_unbalanced finding with the difference for an accountant to acknowledge (the inbox:
STATEMENT_ACCEPT_UNBALANCED=true). Re-importing a statement, or
an overlapping statement of the same account, adds nothing it already brought (README, "Bank
statements").

Prints one result line per file on stdout, "FILE: format F, statements S, lines read N, lines new
M, already known K, known from overlapping statements O" (new: stored; already known: the same
statement had brought them; overlapping: another statement of the account had, and they are linked
to its lines; N = M + K + O), followed by ", balances not checked U" when U of its statements could
not be checked and ", unbalanced, stored with findings ID...: B" for statements stored unbalanced;
or "FILE: failed: REASON" (the reason also on stderr), then a summary line. One failing file does
not stop the others. While a large file is written, progress (lines, lines per second) goes to
stderr if it is a terminal. Exit status 0 when every file was imported (or had been before), 1
when any failed, 2 for bad usage or a profile file that is not one.`;

export const command: Command = {
  summary: 'import bank statements (CAMT.053, MT940, CSV)',
  help: HELP,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub !== 'import') throw new UsageError(sub === undefined ? 'missing subcommand: statement import FILE...' : `unknown subcommand '${sub}'`);
    let profile: string | undefined;
    let acceptUnbalanced = false;
    const files: string[] = [];
    for (let i = 0; i < rest.length; i++) {
      const arg = rest[i]!;
      if (arg === '--accept-unbalanced') acceptUnbalanced = true;
      else if (arg === '--profile' || arg.startsWith('--profile=')) {
        profile = arg === '--profile' ? rest[++i] : arg.slice('--profile='.length);
        if (!profile) throw new UsageError('--profile needs a FILE');
      } else files.push(arg);
    }
    if (files.length === 0) throw new UsageError('statement import needs at least one FILE');
    const unknownOption = files.find((f) => f.startsWith('-') && f !== '-');
    if (unknownOption) throw new UsageError(`unknown option '${unknownOption}'`);
    return withContext('statement import', {}, async (ctx) => {
      let csv: CsvOptions;
      try {
        csv = await csvSettings(ctx.config, profile ?? ctx.config.STATEMENT_CSV_PROFILE);
      } catch (error) {
        // Name the setting at fault (CONTRACT.md: bad configuration exits 2 naming it): the option
        // when it gave the file, else the setting the inbox reads as well.
        const source = profile === undefined ? 'STATEMENT_CSV_PROFILE' : '--profile';
        process.stderr.write(`bnpl-recon statement: ${source}: ${printable((error as Error).message, '\n\t')}\n`);
        return 2;
      }
      const done: ImportResult[] = [];
      let failed = 0;
      for (const file of files) {
        try {
          await open(file).then(
            (handle) => handle.close(),
            (error: unknown) => {
              throw new StatementFormatError(`unreadable: ${(error as Error).message}`);
            },
          );
          const progress = startProgress({ label: file, unit: 'lines', log: ctx.log });
          const r = await importStatementFile(ctx.database, ctx.config.PROVIDER_ENV, file, {
            ...importLimits(ctx.config),
            csv,
            acceptUnbalanced,
            onProgress: (lines) => progress.update(lines),
          }).finally(() => progress.finish());
          done.push(r);
          process.stdout.write(`${describeStatementImport(file, r)}\n`);
        } catch (error) {
          failed += 1;
          const reason = error instanceof Error ? error.message : String(error);
          process.stdout.write(`${file}: failed: ${printable(reason, '\n\t')}\n`);
          process.stderr.write(`bnpl-recon statement: ${file}: ${printable(reason, '\n\t')}\n`);
          if (!(error instanceof StatementFormatError)) ctx.log.error({ err: error, file }, 'statement import failed');
        }
      }
      const read = done.reduce((n, r) => n + r.linesRead, 0);
      const added = done.reduce((n, r) => n + r.linesNew, 0);
      const known = done.reduce((n, r) => n + r.linesKnown, 0);
      const overlap = done.reduce((n, r) => n + r.linesOverlap, 0);
      process.stdout.write(`files ${files.length}: imported ${done.length}, failed ${failed}; lines read ${read}, lines new ${added}, already known ${known}, known from overlapping statements ${overlap}\n`);
      return failed > 0 ? 1 : 0;
    });
  },
};
