import type { TransactionSql } from 'postgres';
import { cancelOnAbort } from '../db/cancel-on-abort.js';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { createFoundTable } from './found.js';
import { buildScope } from './scope.js';
import { resolveCleared, upsertFindings } from './lifecycle.js';
import { finishRun, startRun } from '../jobs/runs.js';
import { runSingleton } from '../jobs/singleton.js';
import { assertStillHeld, type SessionLock } from '../jobs/session-lock.js';
import type { ReconcileMetrics } from './metrics.js';
import { recordDuplicateDeliveries } from './rules/duplicate-delivery.js';
import { DEFAULT_PAYOUT_SETTINGS } from './rules/payout-common.js';
import { RULES } from './rules/registry.js';
import { INVOICE_EVIDENCE_KINDS, invoiceEvidenceSince, invoiceRulesKey, PAYOUT_EVIDENCE_KINDS } from './invoice-scope.js';
import type { DeductionTerms, DiscrepancyKind, PassSummary, RuleParams } from './types.js';
import { currentRelease, INVOICE_RULES_SETTING, judgingSettings, RELEASE_SETTING } from './settings.js';
import { DEFAULT_INVOICE_SETTINGS, stageInvoiceEvidence } from './rules/invoice-common.js';
import { transaction } from '../db/transaction.js';
import { recordInvoiceTotals } from './invoice-totals.js';

export interface ReconcileContext {
  config: Pick<Config, 'PROVIDER_ENV' | 'WEBHOOK_GRACE_SECONDS'> &
    Partial<Pick<Config, 'PAYOUT_SETTLEMENT_DAYS' | 'PAYOUT_SOURCE_IBANS' | 'PAYOUT_ACCOUNT_IBANS' | 'PAYOUT_REFERENCE_PATTERN' | 'INVOICE_PAYOUT_DAYS' | 'CONTRACT_TERMS'>>;
  /** overrides CONTRACT_TERMS (tests); absent: the setting's; neither: deductions are reported, not judged */
  deductionTerms?: DeductionTerms | null;
  log: Logger;
  database: Database;
  metrics: { reconcile: ReconcileMetrics };
}

/**
 * One pass over the environment's ledger. Skips (returns skipped: true) when another replica holds
 * the environment's lock. The rules and the lifecycle run in one READ COMMITTED transaction, so a
 * failed pass leaves no half-applied status changes (duplicate deliveries, which have no
 * lifecycle, are recorded in a second one alongside); the reconcile_runs row is written outside it
 * so a failure stays on record. `clock` is the pass's "now" (tests fix it); absent, it is read
 * once the lock is held.
 */
export async function runReconcilePass(
  ctx: ReconcileContext,
  clock?: Date,
  options: {
    full?: boolean;
    onStep?: (stepsDone: number) => void;
    /** Recorded with the run: the daemon's passes are the ones a one-off `reconcile` judges like. */
    origin?: 'daemon' | 'command';
    /**
     * Stops the pass (the scheduler's stop, at shutdown): its running statement is cancelled, its
     * transactions roll back and the run is recorded failed, as when the lock is lost.
     */
    signal?: AbortSignal;
  } = {},
): Promise<PassSummary> {
  const environment = ctx.config.PROVIDER_ENV;
  const started = performance.now();
  const metrics = ctx.metrics.reconcile;
  const summary: PassSummary = {
    skipped: false, environment, mode: 'full', startedAt: new Date().toISOString(), durationMs: 0, found: {}, stepMs: {}, opened: 0, reopened: 0, resolved: 0,
    duplicateDeliveries: 0,
  };
  try {
    const outcome = await runSingleton(
      ctx,
      // A heartbeat, as the poll's: a pass runs for minutes on a big ledger, and a replica whose
      // lock session died (a failover) must stop reporting itself leader and stop its pass while
      // another replica takes the lock, not at its final fence (test/reconcile/lock-lost.test.ts).
      {
        lock: 'reconcile', environment, heartbeatMs: RECONCILE_LOCK_HEARTBEAT_MS, runs: 'reconcile_runs', onLeader: (held) => metrics.lockHeld.set(held ? 1 : 0),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      async (signal, lock) => {
        // started_at is the pass's clock: the next incremental pass looks at what changed since it.
        // Read once the lock is held, not when the pass was asked for: taking the lock can wait
        // for a connection (seconds while a failover settles), and a clock read before it could
        // date this run before the end of the previous holder's run (two complete runs recorded
        // as overlapping, seen in test/e2e/failover.test.ts). A caller's clock (tests) is kept.
        const now = clock ?? new Date();
        summary.startedAt = now.toISOString();
        const settings = judgingSettings(ctx.config);
        const payout = {
          settlementDays: ctx.config.PAYOUT_SETTLEMENT_DAYS ?? DEFAULT_PAYOUT_SETTINGS.settlementDays,
          sourceIbans: ctx.config.PAYOUT_SOURCE_IBANS ?? [],
          accountIbans: ctx.config.PAYOUT_ACCOUNT_IBANS ?? [],
          referencePattern: ctx.config.PAYOUT_REFERENCE_PATTERN ?? null,
        };
        const invoice = { payoutDays: ctx.config.INVOICE_PAYOUT_DAYS ?? DEFAULT_INVOICE_SETTINGS.payoutDays, terms: ctx.deductionTerms ?? ctx.config.CONTRACT_TERMS ?? null };
        const params: RuleParams = { environment, now, graceSeconds: ctx.config.WEBHOOK_GRACE_SECONDS, scoped: false, payout, invoice };
        const runId = await startRun(ctx.database.sql, 'reconcile_runs', environment, {
          started_at: now.toISOString(), origin: options.origin ?? 'command',
          settings: JSON.stringify({ ...settings, [INVOICE_RULES_SETTING]: invoiceRulesKey(params), [RELEASE_SETTING]: currentRelease() }),
        });
        summary.runId = runId;
        try {
          await runRules(ctx, params, runId, summary, options.full ?? false, lock, signal, options.onStep);
        } catch (error) {
          await finishRun(ctx.database.sql, 'reconcile_runs', runId, 'failed', String((error as Error).message ?? error)).catch((finishError: unknown) => {
            // The next pass of the environment records it failed (lifecycle: a run left running).
            ctx.log.error({ err: finishError, runId }, 'reconcile: the failed pass could not be recorded failed');
          });
          throw error;
        }
        await finishRun(ctx.database.sql, 'reconcile_runs', runId, 'complete', null, {
          mode: summary.mode, opened: summary.opened, resolved: summary.resolved, reopened: summary.reopened,
        });
      },
    );
    if (outcome.skipped) {
      ctx.log.info({ environment }, 'reconcile pass skipped: another process holds the reconcile lock (another replica\'s pass, or an acknowledgement being written)');
      metrics.passes.inc({ outcome: 'skipped' });
      return { ...summary, skipped: true };
    }
    summary.durationMs = Math.round(performance.now() - started);
    metrics.passes.inc({ outcome: 'complete' });
    metrics.duration.observe(summary.durationMs / 1000);
    ctx.log.info({ ...summary }, 'reconcile pass complete');
    return summary;
  } catch (error) {
    metrics.passes.inc({ outcome: 'failed' });
    throw error;
  }
}

/** How often the pass's lock holder checks it still holds the lock (the poll's default). */
const RECONCILE_LOCK_HEARTBEAT_MS = 5000;

/**
 * Stops the transaction's statement when `signal` aborts (the lock is lost, or the caller stops the
 * pass: runSingleton joins the two): the transaction fails and rolls back at once instead of running
 * its remaining rules beside the next holder, or past a shutdown's deadline (db/cancel-on-abort.ts).
 * Meanwhile its connection is marked as running long statements, so a pool replacement for a stall
 * (a readiness check or a commit that waited behind the pass) keeps it while the server still works
 * on it (db/writable-host.ts); a pass that lost its lock or was stopped no longer wants its
 * statement, and unmarks it at once. Returns the function that stops watching, to be awaited
 * before the transaction ends.
 */
async function watchPassStatement(ctx: ReconcileContext, tx: TransactionSql, signal: AbortSignal): Promise<() => Promise<void>> {
  const { backend, done } = await ctx.database.longStatements(tx);
  signal.addEventListener('abort', done, { once: true });
  let unwatch: () => Promise<void>;
  try {
    unwatch = await cancelOnAbort(ctx.database.sql, tx, signal, backend);
  } catch (error) {
    done();
    signal.removeEventListener('abort', done);
    throw error;
  }
  return async () => {
    done();
    signal.removeEventListener('abort', done);
    await unwatch();
  };
}

/** The pass's session settings, for each of its transactions (see runRules). */
async function tuneForPass(tx: TransactionSql): Promise<void> {
  // The order rules hash or sort order_events whole in a full pass: at 1,000,000 orders the hash
  // of 2,000,000 events takes ~140 MB and spilled to disk in batches with 64 MB (missed_webhook
  // 5.3 s, 2.1 s without spilling and staged). Only the pass's transactions get it, one pass at a
  // time per environment. JIT compilation costs more than it saves on these one-off statements
  // (~0.3 s per statement measured at 1,000,000). Two workers per Gather: the staged rules'
  // scans (stage.ts) run in parallel whatever the server's default says.
  await tx`set local work_mem = '256MB'`;
  await tx`set local jit = off`;
  await tx`set local max_parallel_workers_per_gather = 2`;
}

async function runRules(
  ctx: ReconcileContext,
  base: RuleParams,
  runId: number,
  summary: PassSummary,
  forceFull: boolean,
  lock: Pick<SessionLock, 'key' | 'pid'>,
  signal: AbortSignal,
  onStep?: (stepsDone: number) => void,
): Promise<void> {
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    // Between steps: a pass whose lock is gone goes no further.
    signal.throwIfAborted();
    const t0 = performance.now();
    const result = await fn();
    summary.stepMs[step] = Math.round(performance.now() - t0);
    onStep?.(Object.keys(summary.stepMs).length);
    return result;
  };
  // Duplicate deliveries are recorded in a transaction of their own, alongside the order rules:
  // they are facts written once (ON CONFLICT DO NOTHING, never updated, never resolved), share no
  // rows with the other kinds, and on an environment's first pass their lookups wait on reading the
  // ledger's indexes while the order rules keep the CPU busy (1,000,000 orders: ~3 s that no longer
  // adds to the pass). If either transaction fails the pass fails; what the other committed is
  // still true, and the next pass repeats it without effect.
  const duplicates = transaction(ctx.database.sql, async (tx) => {
    const unwatch = await watchPassStatement(ctx, tx, signal);
    try {
      await tuneForPass(tx);
      summary.duplicateDeliveries = await timed('duplicate_delivery', () => recordDuplicateDeliveries(tx, base));
      await assertStillHeld(tx, lock);
    } finally {
      await unwatch();
    }
  });
  let keptWritten: string[] = [];
  const orderAndPayoutRules = transaction(ctx.database.sql, async (tx) => {
    const unwatch = await watchPassStatement(ctx, tx, signal);
    try {
      await orderAndPayoutRulesIn(tx);
    } finally {
      await unwatch();
    }
  });
  async function orderAndPayoutRulesIn(tx: TransactionSql): Promise<void> {
    await tuneForPass(tx);
    const scope = await timed('scope', () => buildScope(tx, base, forceFull, currentRelease()));
    const scoped: RuleParams = { ...base, scoped: scope.mode === 'incremental' };
    summary.mode = scope.mode;
    if (scope.orders !== undefined) summary.scopeOrders = scope.orders;
    ctx.log.debug({ mode: scope.mode, reason: scope.reason, orders: scope.orders }, 'reconcile scope');
    // An incremental pass judges the invoice kinds only when their evidence changed (invoice-scope.ts);
    // otherwise their findings, and the invoice totals of the previous pass, stand. The kinds that
    // read the payout reports are left standing too while no new evidence touches a report.
    // The payout kinds, likewise, only when a payout event, a statement or a settlement deadline is new.
    const invoices = scope.since === undefined
      ? { changed: true, reason: scope.reason, standing: [], payouts: { changed: true, reason: scope.reason } }
      : await timed('invoice_scope', () => invoiceEvidenceSince(tx, scoped, scope.since!, scope.invoiceRulesKey ?? null));
    summary.invoices = { judged: invoices.changed, reason: invoices.reason, ...(invoices.standing.length > 0 ? { standing: invoices.standing } : {}) };
    summary.payouts = { judged: invoices.payouts.changed, reason: invoices.payouts.reason };
    // Without CONTRACT_TERMS deductions are not judged (CONTRACT.md: "reported, not judged"): their
    // findings stand, rather than resolve as if the rows now agreed with a contract (a one-off
    // `reconcile` from a shell without the terms resolved the daemon's findings, and its next pass
    // reopened them).
    const unjudged: DiscrepancyKind[] = base.invoice?.terms ? [] : ['payout_deduction_mismatch'];
    const standing = [...(invoices.changed ? invoices.standing : INVOICE_EVIDENCE_KINDS), ...(invoices.payouts.changed ? [] : PAYOUT_EVIDENCE_KINDS), ...unjudged];
    const params: RuleParams = { ...scoped, payoutsStand: !invoices.payouts.changed };
    const rules = RULES.filter((rule) => !standing.includes(rule.kind));
    await createFoundTable(tx);
    if (invoices.changed) keptWritten = await timed('invoice_evidence', () => stageInvoiceEvidence(tx, params, scope.since));
    for (const rule of rules) summary.found[rule.kind] = await timed(rule.kind, () => rule.collect(tx, params));
    if (invoices.changed) await timed('invoice_totals', () => recordInvoiceTotals(tx, params, runId));
    // An incremental pass resolves the order findings of its scope only: `found` is complete for
    // those, and the others' evidence has not changed (scope.ts).
    const counts = await timed('upsert', () => upsertFindings(tx, params));
    summary.opened = counts.opened;
    summary.reopened = counts.reopened;
    summary.resolved = await timed('resolve', () => resolveCleared(tx, params, rules.map((rule) => rule.kind)));
    // Fencing: a pass whose lock session was killed meanwhile commits nothing beside the next holder.
    await assertStillHeld(tx, lock);
  }
  const [first, second] = await Promise.allSettled([orderAndPayoutRules, duplicates]);
  // A statement cancelled because the lock was lost or the pass stopped fails with "canceling
  // statement": the loss or the stop is the reason.
  if (signal.aborted && (first.status === 'rejected' || second.status === 'rejected')) throw signal.reason;
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  // The kept tables the pass wrote, analysed after its commit, each in a statement of its own: the
  // lock ANALYZE takes then lasts as long as it runs, not the pass (kept-set.ts). Statistics serve
  // the next passes' plans; a failure here costs a plan, not the pass.
  for (const table of keptWritten) {
    await ctx.database.sql`analyze ${ctx.database.sql(table)}`.catch((error: unknown) => ctx.log.warn({ err: error, table }, 'could not analyse a kept table after the pass'));
  }
}
