import type { Sql, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { writeHalving } from '../batch/halving.js';
import { isTransientDatabaseError } from '../db/errors.js';
import { retrying } from '../db/retry.js';
import { finishRun, startRun } from '../jobs/runs.js';
import { assertStillHeld, LockLostError, type SessionLock } from '../jobs/session-lock.js';
import { runSingleton } from '../jobs/singleton.js';
import { startProgress } from '../lifecycle/progress.js';
import type { Logger } from '../log/logger.js';
import { classifyDelivery, refusedByLedger, type StorableClassification } from '../webhooks/classify.js';
import { isAppliedConflict, rederiveDeliveries, type Rederived, type RederiveResult } from '../webhooks/ledger-rederive.js';
import { PARSER_VERSION } from '../webhooks/parser-version.js';
import type { ReparseMetrics } from './metrics.js';
import { YieldingPace, type PaceSettings } from '../batch/pace.js';
import { outcomeOf, ReparseTally, type ReparseChange, type ReparseOutcome, type StoredFields } from './outcome.js';
import { transaction } from '../db/transaction.js';
import { removeStaleTypedRows } from './stale-typed-rows.js';

/** Which stored deliveries a run re-classifies: one unparsed status, both (unparsed), or every delivery (all). */
export const REPARSE_STATUS_FILTERS = ['unknown_topic', 'invalid_shape', 'unparsed', 'all'] as const;
export type ReparseStatusFilter = (typeof REPARSE_STATUS_FILTERS)[number];

export interface ReparseOptions {
  environment: ProviderEnvironment;
  status: ReparseStatusFilter;
  /** Only deliveries received at or after this instant. */
  /** received at or after this instant: ISO text to the microsecond (reports/discrepancies.ts sinceMicros), as received_at is stored */
  since?: string | undefined;
  /** Classify and decide inside a transaction that is rolled back: what would change, nothing written. */
  dryRun: boolean;
  trigger: 'command' | 'automatic';
  /** Only deliveries classified by an older parser than this one (the daemon's automatic run). */
  olderOnly?: boolean;
  batchSize?: number;
  /**
   * The share of wall time spent on batches (0 < duty <= 1, default 1): after a batch that took
   * t ms the run pauses t * (1 - duty) / duty ms, leaving the rest of the machine to the receiver.
   * With `yieldTo`, this is the most it takes; the receiver's commit time lowers it (pace.ts).
   */
  duty?: number;
  /** The receiver to yield to (the daemon's own): no batch starts while its commits are slow. */
  yieldTo?: { commitPressureMs(): number; pace: Omit<PaceSettings, 'maxDuty'> };
  signal?: AbortSignal;
  /** Log progress as "reparse <environment>" (startProgress). */
  progress?: boolean;
}

export interface ReparseSummary {
  skipped: boolean;
  runId: number | null;
  dryRun: boolean;
  aborted: boolean;
  parserVersion: number;
  examined: number;
  changed: number;
  outcomes: Record<ReparseOutcome, number>;
  changes: ReparseChange[];
}

interface StoredRow {
  id: string;
  raw_body: Buffer;
  topic: string | null;
  parse_status: string;
  parse_error: string | null;
  event_key: string | null;
  applied: boolean;
}

const DEFAULT_BATCH = 500;
/** Rounds of a batch that met a retry the receiver committed meanwhile, before it is split. */
const CONFLICT_ATTEMPTS = 3;

/**
 * Re-classifies stored raw bodies with the current parser (the signature was verified at receipt;
 * the stored bytes are authoritative) and re-derives their parsed fields, applied decision and
 * typed rows in batches walked by id (ledger-rederive.ts). Idempotent: a second run finds nothing to
 * change. One run per environment at a time (the reparse lock); it runs beside the receiver, whose
 * concurrent retries the primary key of webhook_applied_events arbitrates.
 */
export interface ReparseContext {
  database: Database;
  log: Logger;
  metrics: { reparse: ReparseMetrics };
}

export async function runReparse(ctx: ReparseContext, options: ReparseOptions): Promise<ReparseSummary> {
  const tally = new ReparseTally();
  const summary = (skipped: boolean, runId: number | null, aborted: boolean): ReparseSummary => ({
    skipped, runId, dryRun: options.dryRun, aborted, parserVersion: PARSER_VERSION,
    examined: tally.examined, changed: tally.changed, outcomes: { ...tally.outcomes }, changes: tally.changeList(),
  });
  const result = await runSingleton(
    ctx,
    { lock: 'reparse', environment: options.environment, heartbeatMs: 10_000, ...(options.dryRun ? {} : { runs: 'reparse_runs' as const }), ...(options.signal ? { signal: options.signal } : {}) },
    async (signal, lock) => {
      const { sql } = ctx.database;
      const runId = options.dryRun
        ? null
        : await startRun(sql, 'reparse_runs', options.environment, {
            trigger: options.trigger, status_filter: options.status, since: options.since ?? null, parser_version: PARSER_VERSION,
          });
      const totals = () => ({ examined: tally.examined, outcomes: JSON.stringify(tally.outcomes), changes: JSON.stringify(tally.changeList()) });
      try {
        let aborted: boolean;
        let reason: unknown = undefined;
        try {
          aborted = await walk(ctx, options, tally, signal, lock);
        } catch (error) {
          // The fence refused a batch: the lock is gone before the heartbeat noticed. Stopped as
          // when the heartbeat notices it; the next holder goes on from the batches committed.
          if (!(error instanceof LockLostError)) throw error;
          ctx.log.warn({ err: error }, 'reparse stopped: its lock was lost');
          aborted = true;
          reason = error.message;
        }
        reason ??= signal.reason;
        if (runId !== null) await finishRun(sql, 'reparse_runs', runId, aborted ? 'aborted' : 'complete', aborted ? String(reason ?? 'aborted') : null, totals());
        return summary(false, runId, aborted);
      } catch (error) {
        if (runId !== null) await finishRun(sql, 'reparse_runs', runId, 'failed', String((error as Error).message ?? error), totals()).catch(() => undefined);
        throw error;
      }
    },
  );
  return result.skipped ? summary(true, null, false) : result.value;
}

/** The batches; true when the signal stopped the walk before the end. */
async function walk(ctx: ReparseContext, options: ReparseOptions, tally: ReparseTally, signal: AbortSignal, lock: SessionLock): Promise<boolean> {
  const { sql } = ctx.database;
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const filter = selection(sql, options);
  const [count] = await sql<{ n: string }[]>`select count(*) as n from webhook_deliveries where ${filter}`;
  const total = Number(count?.n ?? 0);
  const progress = options.progress ? startProgress({ label: `reparse ${options.environment}`, unit: 'deliveries', total, log: ctx.log }) : undefined;
  // Dry runs roll every batch back, so an event a dry batch "applied" is remembered here to count its
  // later deliveries as the retries they would be.
  const dryApplied = new Set<string>();
  const pace = new YieldingPace({ maxDuty: options.duty ?? 1, ...(options.yieldTo?.pace ?? { minDuty: 1, yieldAboveMs: Number.POSITIVE_INFINITY, step: 0 }) });
  const pressure = () => options.yieldTo?.commitPressureMs() ?? 0;
  let after = 0;
  try {
    for (;;) {
      if (signal.aborted) return true;
      await yieldWhile(() => pace.mustYield(pressure()), signal, ctx.metrics.reparse);
      const rows = await sql<StoredRow[]>`
        select d.id::text as id, d.raw_body, d.topic, d.parse_status::text as parse_status, d.parse_error, d.event_key, d.applied
        from webhook_deliveries d
        where ${filter} and d.id > ${after}
        order by d.id
        limit ${batchSize}`;
      if (rows.length === 0) return false;
      after = Number(rows[rows.length - 1]!.id);
      const batchStarted = performance.now();
      const batch: Rederived[] = rows.map((row) => ({ deliveryId: Number(row.id), classification: reclassify(row) }));
      // Only a batch holding a delivery applied before may hold a typed row to remove (stale-typed-rows.ts):
      // the unparsed runs (the daemon's) never have one and skip that statement.
      const hadApplied = rows.some((row) => row.applied);
      const results = await writeBatch(ctx.log, batch, (part) => (options.dryRun ? rolledBack(sql, part, hadApplied) : fencedRederive(sql, part, lock, hadApplied)));
      const decided = new Map(results.map((r) => [r.deliveryId, r]));
      const batchOutcomes = new Map<ReparseOutcome, number>();
      rows.forEach((row, i) => {
        const stored = decided.get(Number(row.id));
        const now = stored?.classification ?? batch[i]!.classification;
        let applied = stored?.applied ?? false;
        if (options.dryRun && applied && now.event) {
          const key = now.event.key;
          if (dryApplied.has(key) && !row.applied) applied = false;
          dryApplied.add(key);
        }
        const before: StoredFields = { topic: row.topic, parseStatus: row.parse_status, parseError: row.parse_error, eventKey: row.event_key, applied: row.applied };
        // A typed row written now (restored after its table was emptied, or written again after the
        // stale one was removed) is a change: the pass after it must judge what rests on that row.
        const outcome = outcomeOf(before, now, applied, stored?.typedRemoved === true || stored?.typedWritten === true);
        tally.add(now.topic ?? row.topic, row.parse_status, now.status, outcome);
        batchOutcomes.set(outcome, (batchOutcomes.get(outcome) ?? 0) + 1);
      });
      if (!options.dryRun) for (const [outcome, n] of batchOutcomes) ctx.metrics.reparse.deliveries.labels(outcome).inc(n);
      progress?.update(tally.examined);
      const rest = pace.pauseAfter(performance.now() - batchStarted, pressure());
      if (rest > 0) await pause(rest, signal);
    }
  } finally {
    progress?.finish();
  }
}

function selection(sql: Sql, options: ReparseOptions) {
  // Both unparsed filters repeat parse_status <> 'parsed' so the partial index of unparsed deliveries serves them.
  const status =
    options.status === 'all'
      ? sql`true`
      : options.status === 'unparsed'
        ? sql`parse_status <> 'parsed'`
        : sql`parse_status <> 'parsed' and parse_status = ${options.status}`;
  return sql`environment = ${options.environment} and ${status}
    and ${options.since ? sql`received_at >= ${options.since}::timestamptz` : sql`true`}
    and ${options.olderOnly ? sql`parser_version < ${PARSER_VERSION}` : sql`true`}`;
}

/** The current parser's view of a stored body. Bodies were stored only as JSON; one that is not stays unparsed. */
function reclassify(row: StoredRow): StorableClassification {
  const c = classifyDelivery(row.raw_body);
  if (c.ok) return c;
  return { ok: true, status: 'invalid_shape', topic: row.topic, reason: 'not_an_object', error: `body is not JSON: ${c.error}`.slice(0, 1000) };
}

/** A batch delivery as written: its applied decision, and whether its earlier typed row was removed (stale-typed-rows.ts). */
interface BatchResult extends RederiveResult {
  typedRemoved: boolean;
}

interface Written extends BatchResult {
  classification: StorableClassification;
}

/**
 * Writes a batch. A unique violation of the applied index means the receiver committed a retry of
 * one of these events meanwhile: the batch is written again and now sees it. Any other refusal
 * (the ledger refusing a typed value) is isolated by halving (batch/halving.ts), as at receipt, and
 * the delivery at fault stays stored as invalid_shape (ledger_refused).
 */
async function writeBatch(log: Logger, batch: Rederived[], write: (batch: Rederived[]) => Promise<BatchResult[]>): Promise<Written[]> {
  const attempt = async (part: readonly Rederived[]): Promise<Written[]> => {
    const results = await retrying(() => write([...part]), { attempts: CONFLICT_ATTEMPTS, retryOn: isAppliedConflict });
    return results.map((r, i) => ({ ...r, classification: part[i]!.classification }));
  };
  const alone = async (one: Rederived, error: unknown): Promise<Written> => {
    if (one.classification.status !== 'parsed' || isAppliedConflict(error)) throw error;
    log.error({ err: (error as Error).message, deliveryId: one.deliveryId }, 'ledger refused a re-parsed delivery\'s fields; it stays unparsed');
    const refused = refusedByLedger(one.classification, error);
    const [written] = await writeHalving([{ deliveryId: one.deliveryId, classification: refused }], { write: attempt, alone, passOn: isTransientDatabaseError });
    return written as Written;
  };
  // A lost lock fails every half alike, and is no fault of a delivery's.
  const passOn = (error: unknown) => error instanceof LockLostError || isTransientDatabaseError(error);
  return writeHalving(batch, { write: attempt, alone, passOn });
}

/**
 * A batch written only while this run holds the reparse lock (lock fencing, jobs/session-lock.ts):
 * checked in the batch's transaction before its statements, and again after them, just before the
 * commit. The heartbeat notices a lost lock only up to 10 s later, and the check before is not
 * enough: a run whose lock went while its release statement waited for a row lock went on beside
 * the next holder, and their two releases and reclaims of one event left its applied delivery
 * marked not applied while webhook_applied_events named it (test/reparse/fencing.test.ts). Checked
 * last, the run that lost the lock rolls back whichever of the two got the row first.
 */
async function fencedRederive(sql: Sql, batch: Rederived[], lock: SessionLock, hadApplied: boolean): Promise<BatchResult[]> {
  return transaction(sql, async (tx: TransactionSql) => {
    await assertStillHeld(tx, lock);
    const results = await rederive(tx, batch, hadApplied);
    await assertStillHeld(tx, lock);
    return results;
  });
}

/**
 * A batch in the caller's transaction: first the typed rows the current parser would not write go
 * (while the deliveries still carry their old key and applied flag), then the re-derivation, which
 * joins the transaction (ledger-rederive.ts) and writes the current parser's rows.
 */
async function rederive(tx: TransactionSql, batch: Rederived[], hadApplied: boolean): Promise<BatchResult[]> {
  const removed = hadApplied ? await removeStaleTypedRows(tx, batch) : new Set<number>();
  const results = await rederiveDeliveries(tx, batch);
  return results.map((r) => ({ ...r, typedRemoved: removed.has(r.deliveryId) }));
}

class DryRunRollback extends Error {
  constructor(readonly results: BatchResult[]) {
    super('dry run');
  }
}

/** The batch written and decided by the database, then rolled back. */
async function rolledBack(sql: Sql, batch: Rederived[], hadApplied: boolean): Promise<BatchResult[]> {
  try {
    await transaction(sql, async (tx) => {
      throw new DryRunRollback(await rederive(tx, batch, hadApplied));
    });
  } catch (error) {
    if (error instanceof DryRunRollback) return error.results;
    throw error;
  }
  throw new Error('dry run transaction committed');
}

/** How long reparse waits for the receiver's commits to get fast again before it goes on anyway, at its slowest pace. */
const MAX_YIELD_MS = 2_000;
const YIELD_STEP_MS = 25;

/** Waits while `busy()` holds, up to MAX_YIELD_MS, counting the time in the yield metric. */
async function yieldWhile(busy: () => boolean, signal: AbortSignal, metrics: ReparseMetrics): Promise<void> {
  const started = performance.now();
  while (busy() && !signal.aborted && performance.now() - started < MAX_YIELD_MS) await pause(YIELD_STEP_MS, signal);
  const waited = performance.now() - started;
  if (waited >= 1) metrics.yieldSeconds.inc(waited / 1000);
}

/** Waits `ms`, or less if the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
