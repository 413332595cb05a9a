import { withProcess, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { ConfigError } from '../config/load.js';
import { startDaemon } from '../daemon/daemon.js';
import { surviveNullSocketWrite } from '../db/null-socket-write.js';

export const command: Command = {
  summary: 'run the daemon until SIGTERM/SIGINT',
  help: `Usage: bnpl-recon start

Runs the daemon: the webhook receiver and operator API on PORT, /metrics on METRICS_PORT, the
poller on POLL_SCHEDULE, reconciliation on RECONCILE_SCHEDULE and after every complete poll.
Needs PROVIDER_BASE_URL and PROVIDER_API_KEY; every setting is an environment variable (README).
With DATABASE_URL unset it runs on an embedded Postgres under RECON_DATA_DIR (for trying it out);
in production that is refused unless EMBEDDED_DATABASE_IN_PRODUCTION=true.
The first SIGTERM/SIGINT drains: stop accepting, finish in-flight deliveries and passes, release
locks, close the pool; a second one exits at once.`,
  async run(argv) {
    if (argv.length > 0) throw new UsageError(`unexpected argument '${argv[0]}'`);
    return withProcess('start', { require: ['PROVIDER_BASE_URL', 'PROVIDER_API_KEY'], logTo: 'stdout' }, async ({ config, log, shutdown }) => {
      if (config.DATABASE_URL === undefined && config.PROVIDER_ENV === 'production' && !config.EMBEDDED_DATABASE_IN_PRODUCTION) {
        throw new ConfigError(
          'setting DATABASE_URL is required for start in production: without it the ledger would be an embedded Postgres inside this process\'s data directory (set EMBEDDED_DATABASE_IN_PRODUCTION=true to accept that)',
          'DATABASE_URL',
        );
      }
      if (config.DATABASE_URL === undefined) {
        log.warn({ dataDir: config.RECON_DATA_DIR }, 'DATABASE_URL unset: the ledger is an embedded Postgres under RECON_DATA_DIR, for trying bnpl-recon out; set DATABASE_URL for a real deployment');
      }
      // postgres.js 3.4.9 can throw from a timer when a connection closes under a write (the primary
      // killed in a failover): that ends no daemon (db/null-socket-write.ts). Installed for the
      // process's life, the pool's close at the stop included; in this command only, not in the
      // processes that run the daemon inside something else (the demo, tests).
      let replaceConnections = () => {};
      surviveNullSocketWrite((error) => {
        log.error({ err: error.message, upstream: 'porsager/postgres#1154' }, 'the database driver wrote to a connection that had closed: opening new ledger connections instead of exiting');
        replaceConnections();
      });
      try {
        const daemon = await startDaemon(config, log, shutdown);
        replaceConnections = () => daemon.ctx.database.recycle('the database driver wrote to a connection that had closed');
      } catch (error) {
        // Stopped while starting (a migration lock awaited, the signing secrets fetched): a requested
        // stop that completed, exit 0 as after running.
        if (shutdown.reason !== 'SIGTERM' && shutdown.reason !== 'SIGINT') throw error;
        log.info({ err: (error as Error).message }, 'stopped while starting');
        return 0;
      }
      await shutdown.stopping();
      return 0;
    });
  },
};
