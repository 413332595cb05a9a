import { open } from 'node:fs/promises';
import type { Command } from '../cli.js';
import { UsageError } from '../app/errors.js';
import { openContext } from '../app/context.js';
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log/logger.js';
import { importStatementFile, type ImportResult } from '../statements/import.js';
import { StatementFormatError } from '../statements/types.js';

const HELP = `Usage: bnpl-recon statement import FILE...

Imports bank statements of the merchant account into the ledger of PROVIDER_ENV. The format is
detected from the content, not the file name: CAMT.053 XML, MT940, or CSV with a header row
naming at least a booking date and an amount column (src/statements/csv.ts lists the accepted
columns). Each file is imported in one transaction, and only if its statements balance (opening
balance + bookings = closing balance) and every booking was stored. Re-importing a statement, or
an overlapping statement of the same account, adds nothing it already brought (README, "Bank
statements").

Prints one result line per file on stdout, "FILE: format F, statements S, lines read N, lines new M"
or "FILE: failed: REASON" (the reason also on stderr), then a summary line. One failing file does
not stop the others. While a large file is written, progress (lines, lines per second) goes to
stderr if it is a terminal. Exit status 0 when every file was imported (or had been before), 1
when any failed, 2 for bad usage.`;

export const command: Command = {
  summary: 'import bank statements (CAMT.053, MT940, CSV)',
  help: HELP,
  async run(argv) {
    const [sub, ...files] = argv;
    if (sub !== 'import') throw new UsageError(sub === undefined ? 'missing subcommand: statement import FILE...' : `unknown subcommand '${sub}'`);
    if (files.length === 0) throw new UsageError('statement import needs at least one FILE');
    const unknownOption = files.find((f) => f.startsWith('-') && f !== '-');
    if (unknownOption) throw new UsageError(`unknown option '${unknownOption}'`);
    const config = loadConfig();
    const log = createLogger(config.LOG_LEVEL, 'stderr');
    const ctx = await openContext(config, log, { migrate: config.MIGRATE_ON_START });
    const done: ImportResult[] = [];
    let failed = 0;
    try {
      for (const file of files) {
        try {
          await open(file).then(
            (handle) => handle.close(),
            (error: unknown) => {
              throw new StatementFormatError(`unreadable: ${(error as Error).message}`);
            },
          );
          const progress = process.stderr.isTTY ? progressPrinter(file) : undefined;
          const r = await importStatementFile(ctx.database, config.PROVIDER_ENV, file, { onProgress: progress?.update }).finally(() => progress?.clear());
          done.push(r);
          process.stdout.write(
            `${file}: format ${r.format}, statements ${r.statements ?? '?'}, lines read ${r.linesRead}, lines new ${r.linesNew}${r.alreadyImported ? ' (file already imported)' : ''}\n`,
          );
        } catch (error) {
          failed += 1;
          const reason = error instanceof Error ? error.message : String(error);
          process.stdout.write(`${file}: failed: ${reason}\n`);
          process.stderr.write(`bnpl-recon statement: ${file}: ${reason}\n`);
          if (!(error instanceof StatementFormatError)) log.error({ err: error, file }, 'statement import failed');
        }
      }
      const read = done.reduce((n, r) => n + r.linesRead, 0);
      const added = done.reduce((n, r) => n + r.linesNew, 0);
      process.stdout.write(`files ${files.length}: imported ${done.length}, failed ${failed}; lines read ${read}, lines new ${added}\n`);
      return failed > 0 ? 1 : 0;
    } finally {
      await ctx.shutdown.run('statement import done');
    }
  },
};

/** One self-overwriting stderr line: lines read so far and the rate, at most four times a second. */
function progressPrinter(file: string): { update: (linesRead: number) => void; clear: () => void } {
  const started = performance.now();
  let last = 0;
  let shown = false;
  return {
    update(linesRead) {
      const now = performance.now();
      if (now - last < 250) return;
      last = now;
      shown = true;
      const rate = Math.round(linesRead / Math.max((now - started) / 1000, 0.001));
      process.stderr.write(`\r${file}: ${linesRead} lines read, ${rate}/s\u001b[K`);
    },
    clear() {
      if (shown) process.stderr.write('\r\u001b[K');
    },
  };
}
