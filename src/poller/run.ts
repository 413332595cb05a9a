import { hostname } from 'node:os';
import type { Sql } from 'postgres';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { isTransientDatabaseError } from '../db/errors.js';
import { retrying } from '../db/retry.js';
import type { Logger } from '../log/logger.js';
import type { ProviderClient } from '../provider/client.js';
import { scrub } from '../provider/errors.js';
import type { PollerMetrics } from './metrics.js';
import { newScanResult, scanOrders } from './pager.js';
import { finishRun, startRun, type RunEnd } from '../jobs/runs.js';
import { assertStillHeld, type SessionLock } from '../jobs/session-lock.js';
import { retryingInsertRaces, upsertOrdersPages, type PageToWrite } from './upsert.js';
import { pageBatcher } from './write-batcher.js';
import { transaction } from '../db/transaction.js';

export interface PollContext {
  config: Config;
  log: Logger;
  database: Database;
  metrics: { poller: PollerMetrics };
}

export interface PollRunSummary {
  runId: number;
  status: RunEnd;
  pages: number;
  orders: number;
  requests: number;
  throttled: number;
  retries: number;
  refetches: number;
  probes: number;
  pageSize: number;
  durationMs: number;
  error: string | null;
}

const WRITE_ATTEMPTS = 3;
// Orders per statement: ~20 pages of 100. Bigger batches save little more per order (the rows and
// their index entries are most of the cost) and make the last write, which nothing overlaps, longer.
const WRITE_BATCH_ORDERS = 2000;
// One statement in flight: the pages that arrive while it runs gather into the next. A second
// statement in flight split the same pages into twice the statements and commits (a poll of 100,000
// orders at 500 pages/s: 285-490 commits against 56-303, and 1.56-1.96 s of Postgres CPU against
// 1.29-1.78 s; bench/README.md, poll), and contended for the same cores as the fetch.
const WRITE_STATEMENTS = 1;

/**
 * One full poll of GET /api/v1/orders, recorded in poll_runs. `complete` only when every page was
 * fetched and merged: only such a run may later prove an order absent. The caller holds the poll
 * lock (scheduler.ts, commands/poll.ts). Does not throw for provider or paging failures: they end
 * the run as `failed` (or `aborted` when `signal` fired) and the summary says why.
 */
export interface PollRunOptions {
  /** Called after each page is written, with the pages handed over so far. */
  onPage?: (pages: number) => void;
  /**
   * The poll lock this run holds: every write batch checks, in its own transaction, that the
   * lock's session still holds it (a run whose session was killed must not write beside the next
   * holder before its heartbeat notices).
   */
  lock?: Pick<SessionLock, 'key' | 'pid'>;
}

export async function runPoll(ctx: PollContext, client: ProviderClient, signal?: AbortSignal, options: PollRunOptions = {}): Promise<PollRunSummary> {
  const { config, log, database } = ctx;
  const environment = config.PROVIDER_ENV;
  const metrics = ctx.metrics.poller;
  const started = performance.now();
  const runId = await startRun(database.sql, 'poll_runs', environment, { holder: `${hostname()}:${process.pid}` });
  const runLog = log.child({ pollRunId: runId });
  runLog.info({ environment }, 'poll run started');
  const progress = newScanResult(config.POLL_PAGE_SIZE);
  let status: PollRunSummary['status'] = 'complete';
  let error: string | null = null;
  // Leave the pool two spare connections for the lock heartbeat and the webhook receiver.
  const maxStatements = Math.max(1, Math.min(WRITE_STATEMENTS, config.DB_POOL_MAX - 2));
  const batcher = pageBatcher({
    write: (pages) =>
      retrying(() => writePages(database.sql, environment, runId, pages, options.lock), {
        attempts: WRITE_ATTEMPTS,
        retryOn: isTransientDatabaseError,
        delayMs: (attempt) => 50 * attempt,
        ...(signal ? { signal } : {}),
        onRetry: (err, attempt) => runLog.warn({ err, attempt }, 'page write failed; retrying'),
      }),
    maxStatements,
    maxOrders: WRITE_BATCH_ORDERS,
  });
  try {
    await scanOrders({
      fetchPage: (page, pageSignal) => client.getOrdersPage(page, config.POLL_PAGE_SIZE, pageSignal),
      onPage: async (orders, _page, receivedAt) => {
        const newInRun = await batcher.add({ orders, observedAt: receivedAt });
        metrics.pages.inc();
        options.onPage?.(progress.pages);
        return newInRun;
      },
      perPage: config.POLL_PAGE_SIZE,
      concurrency: config.POLL_CONCURRENCY,
      // Pages waiting for the database (bounded memory): enough for a full batch per statement in
      // flight plus one gathering, so fetching keeps the limiter's pace while writes run.
      writeConcurrency: (maxStatements + 1) * Math.max(1, Math.ceil(WRITE_BATCH_ORDERS / config.POLL_PAGE_SIZE)),
      maxPages: config.POLL_MAX_PAGES,
      log: runLog,
      signal,
      result: progress,
    });
  } catch (caught) {
    status = signal?.aborted ? 'aborted' : 'failed';
    const reason = signal?.aborted && signal.reason instanceof Error ? signal.reason.message : describe(caught);
    error = scrub(reason, config.PROVIDER_API_KEY ? [config.PROVIDER_API_KEY] : []);
  }
  const durationMs = performance.now() - started;
  const summary: PollRunSummary = {
    runId,
    status,
    pages: progress.pages,
    orders: progress.orders,
    requests: progress.stats.requests,
    throttled: progress.stats.throttled,
    retries: progress.stats.retries,
    refetches: progress.refetches,
    probes: progress.probes,
    pageSize: progress.pageSize,
    durationMs,
    error,
  };
  const finished = await finishRun(database.sql, 'poll_runs', runId, status, error, {
    pages: summary.pages, orders: summary.orders, requests: summary.requests, throttled: summary.throttled, retries: summary.retries,
  });
  // The next holder of the poll lock closed this run already: its record stands as that holder wrote it.
  if (!finished) runLog.warn({ status }, 'poll run already closed by the next holder of the poll lock; its record is left as it is');
  metrics.runs.inc({ status });
  metrics.duration.observe(durationMs / 1000);
  metrics.refetchedPages.inc(summary.refetches);
  metrics.ordersLastRun.set(summary.orders);
  const { error: _e, ...figures } = summary;
  if (status === 'complete') runLog.info(figures, 'poll run complete');
  // Aborted: the daemon is stopping, or another replica holds the poll lock now; the next run polls
  // again. Not an error of the provider's or the ledger's, and a clean stop logs none.
  else if (status === 'aborted') runLog.warn({ ...figures, error }, 'poll run aborted');
  else runLog.error({ ...figures, error }, `poll run ${status}`);
  return summary;
}

/**
 * The poller's write policy, beside its statement: a batch under a lock first checks, in its own
 * transaction, that the lock's session still holds it (lock fencing); the page writer retries what
 * is transient (db/retry.ts). Resolves with each page's count of orders new to the run.
 */
async function writePages(sql: Sql, environment: Config['PROVIDER_ENV'], runId: number, pages: readonly PageToWrite[], lock: PollRunOptions['lock']): Promise<number[]> {
  if (!lock) return (await upsertOrdersPages(sql, environment, runId, pages)).newInRunByPage;
  // A lost insert race (upsert.ts) fails the statement and with it the transaction, so the whole
  // transaction runs again; retried inside it, the next attempt met an aborted transaction and the
  // poll run failed (the demo's simulator adds orders mid-scan, so overlapping pages race).
  return await retryingInsertRaces(() =>
    transaction(sql, async (tx) => {
      await assertStillHeld(tx, lock);
      return (await upsertOrdersPages(tx as unknown as Sql, environment, runId, pages, { retryRaces: false })).newInRunByPage;
    }),
  );
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
