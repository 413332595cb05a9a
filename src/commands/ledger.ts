import { parseArgs } from 'node:util';
import { withContext, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { formatReparseSummary } from '../reparse/format.js';
import { REPARSE_STATUS_FILTERS, runReparse, type ReparseStatusFilter } from '../reparse/run.js';
import { sinceMicros } from '../reports/discrepancies.js';

const HELP = `Usage: bnpl-recon ledger reparse [--since ISO-8601] [--status S] [--dry-run] [--json]

Re-classifies stored webhook deliveries of PROVIDER_ENV from their raw bytes with this release's
parser (the signature was verified at receipt; the stored bytes are authoritative). A delivery that
now parses gets its event key, the applied/retry decision by the same database rule as at receipt,
and its typed row; one that still does not keeps its status with the new reason. Safe while the
daemon runs (one reparse per environment at a time; if another is running this one is skipped);
running it twice changes nothing the second time. Prints what changed per topic and status, and
records the run in reparse_runs.

  --status S     unknown_topic, invalid_shape, unparsed (both; the default) or all (every delivery:
                 parsed ones get any missing typed row back)
  --since ISO    only deliveries received at or after this instant
  --dry-run      decide everything in transactions that are rolled back: prints what would change,
                 writes nothing (no run record either)
  --json         the summary as one JSON object instead of a table`;

export const command: Command = {
  summary: 'ledger maintenance: reparse stored deliveries with this release\'s parser',
  help: HELP,
  async run(argv) {
    const [which, ...rest] = argv;
    if (which !== 'reparse') throw new UsageError(`ledger needs reparse${which ? `, not '${which}'` : ''}`);
    const { values, positionals } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: { since: { type: 'string' }, status: { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const status = values.status ?? 'unparsed';
    if (!(REPARSE_STATUS_FILTERS as readonly string[]).includes(status)) throw new UsageError(`--status must be one of ${REPARSE_STATUS_FILTERS.join(', ')}, not '${status}'`);
    let since: string | undefined;
    if (values.since !== undefined) {
      since = sinceMicros(values.since);
      if (since === undefined) throw new UsageError(`--since must be an ISO 8601 date or timestamp (UTC unless it states an offset), not '${values.since}'`);
    }
    return withContext('ledger reparse', {}, async (ctx) => {
      const summary = await runReparse(ctx, {
        environment: ctx.config.PROVIDER_ENV,
        status: status as ReparseStatusFilter,
        since,
        dryRun: values['dry-run'] === true,
        trigger: 'command',
        signal: ctx.shutdown.signal,
        progress: true,
      });
      process.stdout.write(values.json ? `${JSON.stringify(summary)}\n` : formatReparseSummary(ctx.config.PROVIDER_ENV, summary));
      return summary.aborted ? 1 : 0;
    });
  },
};
