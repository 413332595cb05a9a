import { parseArgs } from 'node:util';
import type { Command } from './command.js';
import { openContext } from '../app/context.js';
import { UsageError } from '../app/errors.js';
import { loadConfig, requireSettings } from '../config/load.js';
import { installSignalHandlers } from '../lifecycle/shutdown.js';
import { createLogger } from '../log/logger.js';
import { createProviderClient } from '../provider/client.js';
import { tryAcquirePollLock } from '../poller/lock.js';
import { runPoll } from '../poller/run.js';
import { startProgress } from '../lifecycle/progress.js';
import { abandonStalePollRuns } from '../poller/runs.js';

export const command: Command = {
  summary: "one full poll of the provider's orders, then exit",
  help: `Usage: bnpl-recon poll

Reads every page of GET /api/v1/orders (newest first, POLL_PAGE_SIZE per page, POLL_CONCURRENCY in
flight, at most RATE_LIMIT_RPS requests per second) and merges the orders into the ledger, then
exits. The run is recorded in poll_runs; a JSON summary goes to stdout, logs to stderr.

Takes the same poll lock as the daemon's scheduled poller, so it never runs beside another poll of
the same PROVIDER_ENV; if one is running it exits 1 without polling.

Settings: PROVIDER_BASE_URL, PROVIDER_API_KEY (required), PROVIDER_ENV, DATABASE_URL, RATE_LIMIT_RPS,
POLL_PAGE_SIZE, POLL_PAGE_PARAM, POLL_PAGE_SIZE_PARAM, POLL_CONCURRENCY, POLL_MAX_PAGES,
HTTP_CONNECT_TIMEOUT_MS, HTTP_BODY_TIMEOUT_MS, HTTP_MAX_RETRIES.

Exit status: 0 the run is complete; 1 it failed or was interrupted (see the summary's error);
2 bad usage or configuration.`,
  async run(argv) {
    const { positionals } = parseArgs({ args: argv, options: {}, allowPositionals: true, strict: true });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const config = requireSettings(loadConfig(), 'PROVIDER_BASE_URL', 'PROVIDER_API_KEY');
    const log = createLogger(config.LOG_LEVEL, 'stderr');
    const ctx = await openContext(config, log, { migrate: config.MIGRATE_ON_START });
    installSignalHandlers(ctx.shutdown, log);
    const client = createProviderClient(config, log, ctx.registry);
    ctx.shutdown.register('provider client', () => client.close());
    try {
      const lock = await tryAcquirePollLock(ctx.database, config.PROVIDER_ENV, log, config.POLL_LOCK_HEARTBEAT_MS);
      if (lock === undefined) {
        process.stderr.write(`bnpl-recon poll: another process is polling ${config.PROVIDER_ENV} right now; try again when it is done\n`);
        return 1;
      }
      try {
        await abandonStalePollRuns(ctx.database.sql, config.PROVIDER_ENV);
        const progress = startProgress({ label: `poll ${config.PROVIDER_ENV}`, unit: 'pages', log });
        const summary = await runPoll(ctx, client, AbortSignal.any([ctx.shutdown.signal, lock.lost]), { onPage: (pages) => progress.update(pages) }).finally(() => progress.finish());
        process.stdout.write(`${JSON.stringify(summary)}\n`);
        if (summary.status !== 'complete') process.stderr.write(`bnpl-recon poll: run ${summary.runId} ${summary.status}: ${summary.error ?? 'unknown error'}\n`);
        return summary.status === 'complete' ? 0 : 1;
      } finally {
        await lock.release();
      }
    } finally {
      await ctx.shutdown.run('poll done');
    }
  },
};
