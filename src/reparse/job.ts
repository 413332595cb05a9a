import type { Config } from '../config/schema.js';
import type { Shutdown } from '../lifecycle/shutdown.js';
import { startJob } from '../jobs/job.js';
import { PARSER_VERSION } from '../webhooks/parser-version.js';
import { runReparse, type ReparseContext, type ReparseSummary } from './run.js';

export interface ReparseJob {
  /** A run now, queued behind one in flight (tests, and whoever wants it done before going on). */
  runNow(): Promise<ReparseSummary | undefined>;
  stop(): Promise<void>;
}

/**
 * The automatic run works at most half the time and pauses the other half: it shares the machine
 * with the receiver, whose p99 it must not push past 50 ms (bench/README.md, reparse). Unpaced,
 * 1,000,000 deliveries took 79 s and ingest windows at 1,000/s reached a p99 of 58-169 ms in 7 of 16.
 */
export const REPARSE_DUTY = 0.5;

/**
 * Batches of 100: one takes ~5 ms of statement and writes ~200 KB of WAL (~2 KB per delivery, more
 * after a checkpoint), which the receiver's next commit may have to see flushed; a batch of 500
 * took ~20 ms and ~1 MB (bench/README.md, reparse).
 */
export const REPARSE_BATCH = 100;

/**
 * Yield to the receiver (pace.ts): no batch starts while one of its commits in the last 500 ms took
 * over 15 ms (a delivery waits for at most the commit in flight and its own, so its ack stays well
 * under 50 ms), and the duty halves, down to 1/32; each calm batch gives back 0.05.
 */
export const REPARSE_PACE = { minDuty: 1 / 32, yieldAboveMs: 15, step: 0.05 };

/** How often the daemon looks again for deliveries an older parser classified (an older replica in a rolling upgrade). */
const RECHECK_MS = 60 * 60 * 1000;

/**
 * The daemon's reparse after an upgrade that raised PARSER_VERSION: at start, in the background, and
 * hourly after, it re-classifies the unparsed deliveries an older parser stored (runReparse with
 * olderOnly; a cheap look through the partial index of unparsed deliveries when there are none). The
 * reparse lock makes it one replica's work. Progress goes to the log, counts to
 * bnpl_recon_reparse_deliveries_total; it yields to `receiver` (the daemon's own) while its commits
 * are slow, counted in bnpl_recon_reparse_yield_seconds_total; `onApplied` runs when deliveries became applied (the
 * composition root starts a reconciliation pass, so their findings appear without waiting).
 */
export function startReparseJob(
  ctx: ReparseContext & { config: Pick<Config, 'PROVIDER_ENV'>; shutdown: Pick<Shutdown, 'signal'> },
  options: { onApplied?: () => Promise<void>; receiver?: { commitPressureMs(): number } } = {}): ReparseJob {
  const log = ctx.log.child({ component: 'reparse' });
  const run = async (signal: AbortSignal): Promise<ReparseSummary | undefined> => {
    const [pending] = await ctx.database.sql<{ any: boolean }[]>`
      select exists (
        select 1 from webhook_deliveries
        where environment = ${ctx.config.PROVIDER_ENV} and parse_status <> 'parsed' and parser_version < ${PARSER_VERSION}
      ) as any`;
    if (pending?.any !== true) return undefined;
    log.info({ parserVersion: PARSER_VERSION }, 'unparsed deliveries stored by an older parser: re-classifying them');
    const summary = await runReparse(
      { database: ctx.database, log, metrics: ctx.metrics },
      {
        environment: ctx.config.PROVIDER_ENV, status: 'unparsed', dryRun: false, trigger: 'automatic', olderOnly: true,
        batchSize: REPARSE_BATCH, duty: REPARSE_DUTY, signal, progress: true,
        ...(options.receiver ? { yieldTo: { commitPressureMs: () => options.receiver!.commitPressureMs(), pace: REPARSE_PACE } } : {}),
      },
    );
    if (summary.skipped) log.info('another replica is reparsing');
    else log.info({ runId: summary.runId, examined: summary.examined, outcomes: summary.outcomes, aborted: summary.aborted }, 'reparse done');
    if (!summary.skipped && summary.outcomes.applied > 0 && options.onApplied) {
      await options.onApplied().catch((error: unknown) => log.warn({ err: error }, 'reconciliation after reparse failed; the next scheduled pass covers it'));
    }
    return summary;
  };
  const job = startJob({ name: 'reparse', schedule: { everyMs: RECHECK_MS }, runAtStart: true, log, stopOn: ctx.shutdown.signal, run });
  return { runNow: () => job.runNow(), stop: () => job.stop() };
}
