import { UsageError } from '../config/usage-error.js';
import { applyMigrations, ledgerSchemaStatus } from '../ledger/migrate.js';
import { withContext, type Command } from './command.js';

export const command: Command = {
  summary: 'apply pending migrations and exit',
  help: `Usage: bnpl-recon migrate

Applies pending migrations from migrations/ under an advisory lock (safe while other replicas boot),
prints each migration it applied on stdout ("applied 0015_..."), or that there was none, and where
the schema stands; exits 1 when the schema is one this release cannot work on (docs/upgrading.md).
Uses DATABASE_URL, or the embedded Postgres under RECON_DATA_DIR when it is unset. Back up the
ledger before a migrate (docs/upgrading.md).`,
  async run(argv) {
    if (argv.length > 0) throw new UsageError(`unexpected argument '${argv[0]}'`);
    return withContext('migrate', { migrate: false, access: 'creator' }, async (ctx) => {
      const applied = await applyMigrations(ctx.database, ctx.log, ctx.shutdown.signal);
      const lines = applied.length > 0 ? applied.map((tag) => `applied ${tag}`) : ['no migrations to apply'];
      const status = await ledgerSchemaStatus(ctx.database);
      lines.push(status.state === 'current' ? `schema at ${status.migration}` : status.reason);
      process.stdout.write(`${lines.join('\n')}\n`);
      return status.state === 'incompatible' ? 1 : 0;
    });
  },
};
