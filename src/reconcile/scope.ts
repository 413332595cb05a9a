import type { TransactionSql } from 'postgres';
import { ISO_FORMAT } from './found.js';
import type { RuleParams } from './types.js';
import { INVOICE_RULES_SETTING, RELEASE_SETTING } from './settings.js';
import { pollRunStatus } from '../schema/poller.js';

/**
 * Which orders a pass must look at. A full pass looks at all of them; an incremental pass only at
 * the orders whose evidence may have changed since the previous complete pass began (W), which is
 * what keeps a pass over an unchanged million-order ledger cheap (see bench/reconcile/index.ts).
 *
 * With M = SCOPE_MARGIN_SECONDS (for rows whose transaction began before W but committed after it,
 * and for clock skew between a replica and the database) and G = the grace period, an order is in
 * scope when any of these holds:
 *  1. an order event of it was received at or after W - M - G: new webhooks (they resolve missed
 *     webhooks, add duplicates, change the latest state), and webhooks crossing the grace period now
 *     (state_mismatch waits for the latest webhook to be G old);
 *  2. its snapshot's state_since, or one of its state observations, is at or after W - M - G: the
 *     poller saw a new state, or a seen state is crossing the grace period now;
 *  3. R, the latest complete poll run, is newer than the complete run the previous pass could use
 *     (R_prev: the latest one finished before W - M: a run's finish is the database's clock, W a
 *     replica's, and a run that committed after the previous pass read poll_runs may carry a finish
 *     just before W), and R did not list it (snapshot last_seen_run_id <
 *     R.id; a complete run stamps every order it lists): it may be an orphan now. While R is R_prev,
 *     the previous pass judged every order R did not list with R already (this clause, or a full
 *     pass, the first time a pass saw R), and whether R proves an order orphaned does not change
 *     with time (R's start against the order's first webhook): only their new evidence (1, 2) can
 *     change their findings. Read in every pass, all snapshots took 150-210 ms at 1,000,000
 *     orders, the largest step of a pass with nothing new (bench/README.md, reconcile);
 *  4. R is newer than R_prev, and it received an order event at or after R_prev.started_at - G - M:
 *     those orders were not provably orphaned before and may be now. Without R_prev, every order
 *     with events;
 *  5. R is newer than R_prev, and it has an open or acknowledged orphan_webhook finding: R may list
 *     it again, in the state an earlier poll saw (nothing else new: no new state, no observation);
 *  6. a poll run that did not complete (running, failed, aborted) was the last to list it, at or
 *     after W - M - G (order_snapshots.last_seen_at, the poller's clock, as clause 2's stamps):
 *     such a run's listing is evidence too (state_mismatch's poll after the latest webhook; an
 *     orphan listed after all), though no clause above follows incomplete runs. When the run listed
 *     the order counts, not when it began: a slow, rate-limited scan lists its last pages hours
 *     after its start, and counted from the start, the listing of a run begun more than G + M
 *     before it, then failed, is judged by no incremental pass, only by a full one
 *     (test/reconcile/incremental-long-poll-run.test.ts). The runs
 *     come first: those not finished by W - M - G (a run finishes after its last listing; one still
 *     running has no finish), through poll_runs_env_idx (the statuses named: `<> 'complete'` no
 *     index serves, and with 500,000 runs the planner then probed each snapshot's run, 195 against
 *     6 ms on a scratch ledger of 1,000,000 snapshots). With none, the hash join ends before reading
 *     a snapshot; with one, every snapshot is read (last_seen_run_id and last_seen_at have no index,
 *     src/schema/poller.ts; 90 ms there), as while a run begun since W - M - G ran, and only the
 *     listings since W - M - G enter the scope: 3,906 of the 500,000 orders a long run had listed,
 *     which would otherwise be in every pass until G + M after it ended;
 * Anything else has the same evidence it had at the previous pass, so its findings cannot differ:
 * that includes an order with an open or acknowledged finding and nothing new. Each order rule's
 * time conditions only ever become true as time passes (a state seen, a webhook received, a poll
 * begun at least G before now), and their crossings are clauses 1 and 2; a finding goes only when
 * its evidence changes, which puts its order in scope (1-5). So an incremental pass resolves order
 * findings of its scope only (lifecycle.ts, resolveCleared) and leaves the rest as they are,
 * decided. Re-judged in every pass while open, those orders were most of a pass with nothing new:
 * 4,000 open findings at 1,000,000 orders cost each order rule 4,000 index probes (bench/README.md).
 *
 * A full pass runs when there is no previous complete pass, when asked, when the previous pass
 * judged with another grace period or was judged by another release (settings.ts RELEASE_SETTING),
 * when deliveries were reparsed since W (or a reparse ended without completing), and at least every
 * FULL_PASS_INTERVAL_HOURS as a safety net against a gap in this reasoning.
 */
export const SCOPE_MARGIN_SECONDS = 3600;
/** Clause 6's runs, named rather than `<> 'complete'` so that poll_runs_env_idx serves them. */
const INCOMPLETE_RUN_STATUSES = pollRunStatus.enumValues.filter((status) => status !== 'complete');
export const FULL_PASS_INTERVAL_HOURS = 24;
const REPARSE_SKEW_SECONDS = 60;

export interface Scope {
  mode: 'full' | 'incremental';
  reason: string;
  orders?: number;
  /** An incremental pass: the previous complete pass's start (W), and the invoice settings it recorded (invoice-scope.ts). */
  since?: string;
  invoiceRulesKey?: string | null;
}

export async function buildScope(tx: TransactionSql, p: RuleParams, forceFull: boolean, release: string): Promise<Scope> {
  const now = p.now.toISOString();
  const [last] = await tx<{
    w: string | null; last_full: string | null; last_grace: number | null; last_invoice_rules: string | null; last_release: string | null;
  }[]>`
    select to_char(max(started_at) at time zone 'UTC', ${ISO_FORMAT}) as w,
           to_char(max(started_at) filter (where mode = 'full') at time zone 'UTC', ${ISO_FORMAT}) as last_full,
           (array_agg((settings->>'WEBHOOK_GRACE_SECONDS')::int order by started_at desc, id desc))[1] as last_grace,
           (array_agg(settings->>${INVOICE_RULES_SETTING}::text order by started_at desc, id desc))[1] as last_invoice_rules,
           (array_agg(settings->>${RELEASE_SETTING}::text order by started_at desc, id desc))[1] as last_release
    from reconcile_runs where environment = ${p.environment} and status = 'complete' and started_at <= ${now}::timestamptz`;
  if (forceFull) return { mode: 'full', reason: 'requested' };
  if (!last?.w) return { mode: 'full', reason: 'no previous complete pass' };
  // Clauses 1 and 2 count grace crossings with this pass's G: after a pass that judged with another
  // grace period (or did not record it), the states it judged differently are not in that window.
  if (last.last_grace !== p.graceSeconds) return { mode: 'full', reason: 'the previous pass judged with another grace period' };
  // Findings a pass leaves standing are the previous pass's judgement: after an upgrade (or a
  // rollback) that changed a rule, they are another release's.
  if (last.last_release !== release) return { mode: 'full', reason: `the previous pass was judged by another release (${last.last_release ?? 'unrecorded'})` };
  if (!last.last_full || Date.parse(last.last_full) < p.now.getTime() - FULL_PASS_INTERVAL_HOURS * 3600_000) {
    return { mode: 'full', reason: `no full pass in the last ${FULL_PASS_INTERVAL_HOURS} h` };
  }
  const w = last.w;
  // Reparse (src/reparse) gives old deliveries typed rows with their old received_at, which clause 1
  // cannot see: a run that changed deliveries and finished after W (less a minute for clock skew
  // between a replica and the database; its batches all committed before its finish), or one still
  // running, makes this pass full. A run that did not complete counts whatever it recorded: one
  // whose process died is closed as aborted by the next reparse with no outcomes (jobs/runs.ts
  // abandonStaleRuns), though the batches it committed changed deliveries.
  if (await reparsedSince(tx, p.environment, w)) return { mode: 'full', reason: 'deliveries were reparsed since the previous pass' };
  const lookback = p.graceSeconds + SCOPE_MARGIN_SECONDS;
  // R and R_prev first, so the scope's statement holds clauses 3 and 4 only when R is new. Inside it
  // as a test on R, the planner estimated those clauses at all orders and events whether they ran or
  // not, and sized the union's hash for 1,000,000 orders where a few thousand came (49 MB, most of
  // the statement's time).
  const [runs] = await tx<{ r: string | null; r_prev: string | null }[]>`
    select (select id from poll_runs
            where environment = ${p.environment} and status = 'complete'
            order by started_at desc, id desc limit 1)::text as r,
           (select id from poll_runs
            where environment = ${p.environment} and status = 'complete'
              and finished_at < ${w}::timestamptz - make_interval(secs => ${SCOPE_MARGIN_SECONDS})
            order by started_at desc, id desc limit 1)::text as r_prev`;
  const newRun = runs?.r != null && runs.r !== runs.r_prev;
  await tx`create temporary table scope (order_uuid uuid primary key) on commit drop`;
  const lower = tx`${w}::timestamptz - make_interval(secs => ${lookback})`;
  const sinceNewRun = newRun
    ? tx`
    union
    select order_uuid from order_snapshots where environment = ${p.environment} and last_seen_run_id < ${runs.r}::bigint
    union
    select order_uuid from order_events
    where environment = ${p.environment}
      and received_at >= coalesce((select started_at from poll_runs where id = ${runs.r_prev}::bigint) - make_interval(secs => ${lookback}), '-infinity')
    union
    select entity_id::uuid from discrepancies
    where environment = ${p.environment} and kind = 'orphan_webhook' and entity_type = 'order' and status in ('open', 'acknowledged')`
    : tx``;
  const result = await tx`
    insert into scope
    select order_uuid from order_events where environment = ${p.environment} and received_at >= ${lower}
    union
    select order_uuid from order_snapshots where environment = ${p.environment} and state_since >= ${lower}
    union
    select order_uuid from order_state_observations where environment = ${p.environment} and observed_at >= ${lower}
    union
    select s.order_uuid from order_snapshots s
    where s.environment = ${p.environment} and s.last_seen_at >= ${lower} and s.last_seen_run_id in (
      select id from poll_runs
      where environment = ${p.environment} and status in ${tx(INCOMPLETE_RUN_STATUSES)}
        and coalesce(finished_at, 'infinity') >= ${lower})
    ${sinceNewRun}`;
  await tx`analyze scope`;
  return { mode: 'incremental', reason: `changes since ${w}`, orders: result.count, since: w, invoiceRulesKey: last.last_invoice_rules };
}

/**
 * Whether a reparse may have changed deliveries since W: a run that changed deliveries and finished
 * after W (less REPARSE_SKEW_SECONDS), one still running, or one that did not complete (see above).
 * A delivery that no longer parses counts as a change: if it was applied, the reparse removed its
 * typed row (reparse/stale-typed-rows.ts), and a finding that rested on that row is judged again.
 */
export async function reparsedSince(tx: TransactionSql, environment: RuleParams['environment'], w: string): Promise<boolean> {
  const [reparsed] = await tx<{ any: boolean }[]>`
    select exists (
      select 1 from reparse_runs
      where environment = ${environment}
        and (status = 'running' or (finished_at >= ${w}::timestamptz - make_interval(secs => ${REPARSE_SKEW_SECONDS})
             and (status <> 'complete' or coalesce((outcomes->>'applied')::int, 0) + coalesce((outcomes->>'duplicate')::int, 0)
                                          + coalesce((outcomes->>'now_unparsed')::int, 0) > 0)))
    ) as any`;
  return reparsed?.any === true;
}

/**
 * The SQL condition limiting which findings of discrepancies `d` a pass may resolve: order findings
 * of its scope (see above why the others stand), and duplicate_event's findings of payouts only
 * when the payout kinds are judged (RuleParams.payoutsStand); nothing for a full pass.
 */
export function resolvableInScope(tx: TransactionSql, p: RuleParams) {
  if (!p.scoped) return tx``;
  return tx`and (d.entity_type <> 'order' or d.entity_id in (select order_uuid::text from scope))
            ${p.payoutsStand ? tx`and not (d.kind = 'duplicate_event' and d.entity_type = 'payout')` : tx``}`;
}

/** The SQL condition limiting a rule to the pass's scope; nothing for a full pass. */
export function inScope(tx: TransactionSql, p: RuleParams, column: 'e' | 's' | 'o' | 'g') {
  if (!p.scoped) return tx``;
  return tx`and ${tx(column)}.order_uuid in (select order_uuid from scope)`;
}
