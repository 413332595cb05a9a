import { UsageError } from '../config/usage-error.js';
import { withContext, type Command } from './command.js';

export const command: Command = {
  summary: 'apply pending migrations and exit',
  help: `Usage: bnpl-recon migrate

Applies pending migrations from migrations/ under an advisory lock (safe while other replicas boot)
and exits. Uses DATABASE_URL, or the embedded Postgres under RECON_DATA_DIR when it is unset.`,
  async run(argv) {
    if (argv.length > 0) throw new UsageError(`unexpected argument '${argv[0]}'`);
    return withContext('migrate', { migrate: true }, async () => 0);
  },
};
