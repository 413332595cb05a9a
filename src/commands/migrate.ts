import type { Command } from '../cli.js';
import { loadConfig } from '../config/load.js';
import { openContext } from '../app/context.js';
import { createLogger } from '../log/logger.js';

export const command: Command = {
  summary: 'apply pending migrations and exit',
  help: `Usage: bnpl-recon migrate

Applies pending migrations from migrations/ under an advisory lock (safe while other replicas boot)
and exits. Uses DATABASE_URL, or the embedded Postgres under RECON_DATA_DIR when it is unset.`,
  async run(argv) {
    if (argv.length > 0) throw new (await import('../app/errors.js')).UsageError(`unexpected argument '${argv[0]}'`);
    const config = loadConfig();
    const log = createLogger(config.LOG_LEVEL, 'stderr');
    const ctx = await openContext(config, log, { migrate: true });
    await ctx.shutdown.run('migrate done');
    return 0;
  },
};
