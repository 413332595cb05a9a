import { readFile } from 'node:fs/promises';
import type { Command } from './command.js';
import { UsageError } from '../app/errors.js';
import { openContext } from '../app/context.js';
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log/logger.js';
import { importStatement } from '../statements/import.js';
import { StatementFormatError } from '../statements/types.js';

const HELP = `Usage: bnpl-recon statement import FILE...

Imports bank statements of the merchant account into the ledger of PROVIDER_ENV. The format is
detected from the content, not the file name: CAMT.053 XML, MT940, or CSV with a header row
naming at least a booking date and an amount column (src/statements/csv.ts lists the accepted
columns). Each file is imported in one transaction. Re-importing the same file, or another format
or an overlapping export of the same bookings, adds nothing.

Prints one line per file: the file, its format, lines read and lines new. Exit status 2 when a file
is unreadable or not a statement (the file is named on stderr; the other files are still
imported), 1 on any other failure.`;

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
    let bad = 0;
    try {
      for (const file of files) {
        let bytes: Buffer;
        try {
          bytes = await readFile(file);
        } catch (error) {
          bad += 1;
          process.stderr.write(`bnpl-recon statement: ${file}: unreadable: ${(error as Error).message}\n`);
          continue;
        }
        try {
          const r = await importStatement(ctx.database, config.PROVIDER_ENV, bytes, file);
          process.stdout.write(
            `${file}: format ${r.format}, lines read ${r.linesRead}, lines new ${r.linesNew}${r.alreadyImported ? ' (file already imported)' : ''}\n`,
          );
        } catch (error) {
          if (!(error instanceof StatementFormatError)) throw error;
          bad += 1;
          process.stderr.write(`bnpl-recon statement: ${file}: ${error.message}\n`);
        }
      }
      return bad > 0 ? 2 : 0;
    } finally {
      await ctx.shutdown.run('statement import done');
    }
  },
};
