import { parseArgs } from 'node:util';
import { UsageError } from '../config/usage-error.js';
import { startProgress } from '../lifecycle/progress.js';
import { pollOnce } from '../poller/once.js';
import { createProviderClient } from '../provider/client.js';
import { withContext, type Command } from './command.js';
import { printable } from '../log/printable.js';

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
    return withContext('poll', { require: ['PROVIDER_BASE_URL', 'PROVIDER_API_KEY'] }, async (ctx) => {
      const client = createProviderClient(ctx.config, ctx.log, ctx.metrics.provider);
      ctx.shutdown.register('provider client', () => client.close());
      const progress = startProgress({ label: `poll ${ctx.config.PROVIDER_ENV}`, unit: 'pages', log: ctx.log });
      let summary;
      try {
        summary = await pollOnce(ctx, client, { signal: ctx.shutdown.signal, onPage: (pages) => progress.update(pages) });
      } finally {
        progress.finish();
      }
      if (summary === undefined) {
        process.stderr.write(`bnpl-recon poll: another process is polling ${ctx.config.PROVIDER_ENV} right now, or the database could not be reached; try again when it is done\n`);
        return 1;
      }
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      if (summary.status !== 'complete') process.stderr.write(`bnpl-recon poll: run ${summary.runId} ${summary.status}: ${printable(summary.error ?? 'unknown error', '\n\t')}\n`);
      return summary.status === 'complete' ? 0 : 1;
    });
  },
};
