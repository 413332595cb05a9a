import type { TransactionSql } from 'postgres';
import { ISO_FORMAT } from './found.js';
import type { RuleParams } from './types.js';

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
 *  3. the latest complete poll run R did not list it (snapshot last_seen_run_id < R.id): it may be an
 *     orphan now (index range scan: a complete run stamps every order it lists);
 *  4. R is newer than the complete run the previous pass could use (R_prev: the latest one finished
 *     before W), and it received an order event at or after R_prev.started_at - G - M: those orders
 *     were not provably orphaned before and may be now. Without R_prev, every order with events;
 *  5. it has an open or acknowledged order discrepancy: it may resolve, and its last_checked_at moves.
 * Anything else has the same evidence it had at the previous pass, so its findings cannot differ.
 *
 * A full pass runs when there is no previous complete pass, when asked, when the previous pass
 * judged with another grace period, when deliveries were
 * reparsed since W, and at least every FULL_PASS_INTERVAL_HOURS as a safety net against a gap in
 * this reasoning.
 */
export const SCOPE_MARGIN_SECONDS = 3600;
export const FULL_PASS_INTERVAL_HOURS = 24;
const REPARSE_SKEW_SECONDS = 60;

export interface Scope {
  mode: 'full' | 'incremental';
  reason: string;
  orders?: number;
}

/** `orderKinds`: the kinds whose findings name orders (rules/registry.ts), kept in scope while open. */
export async function buildScope(tx: TransactionSql, p: RuleParams, forceFull: boolean, orderKinds: readonly string[]): Promise<Scope> {
  const now = p.now.toISOString();
  const [last] = await tx<{ w: string | null; last_full: string | null; last_grace: number | null }[]>`
    select to_char(max(started_at) at time zone 'UTC', ${ISO_FORMAT}) as w,
           to_char(max(started_at) filter (where mode = 'full') at time zone 'UTC', ${ISO_FORMAT}) as last_full,
           (array_agg((settings->>'WEBHOOK_GRACE_SECONDS')::int order by started_at desc, id desc))[1] as last_grace
    from reconcile_runs where environment = ${p.environment} and status = 'complete' and started_at <= ${now}::timestamptz`;
  if (forceFull) return { mode: 'full', reason: 'requested' };
  if (!last?.w) return { mode: 'full', reason: 'no previous complete pass' };
  // Clauses 1 and 2 count grace crossings with this pass's G: after a pass that judged with another
  // grace period (or did not record it), the states it judged differently are not in that window.
  if (last.last_grace !== p.graceSeconds) return { mode: 'full', reason: 'the previous pass judged with another grace period' };
  if (!last.last_full || Date.parse(last.last_full) < p.now.getTime() - FULL_PASS_INTERVAL_HOURS * 3600_000) {
    return { mode: 'full', reason: `no full pass in the last ${FULL_PASS_INTERVAL_HOURS} h` };
  }
  const w = last.w;
  // Reparse (src/reparse) gives old deliveries typed rows with their old received_at, which clause 1
  // cannot see: a run that changed deliveries and finished after W (less a minute for clock skew
  // between a replica and the database; its batches all committed before its finish), or one still
  // running, makes this pass full.
  const [reparsed] = await tx<{ any: boolean }[]>`
    select exists (
      select 1 from reparse_runs
      where environment = ${p.environment}
        and (status = 'running' or (finished_at >= ${w}::timestamptz - make_interval(secs => ${REPARSE_SKEW_SECONDS})
             and coalesce((outcomes->>'applied')::int, 0) + coalesce((outcomes->>'duplicate')::int, 0) > 0))
    ) as any`;
  if (reparsed?.any === true) return { mode: 'full', reason: 'deliveries were reparsed since the previous pass' };
  const lookback = p.graceSeconds + SCOPE_MARGIN_SECONDS;
  await tx`create temporary table scope (order_uuid uuid primary key) on commit drop`;
  const lower = tx`${w}::timestamptz - make_interval(secs => ${lookback})`;
  const result = await tx`
    with r as (
      select id, started_at from poll_runs
      where environment = ${p.environment} and status = 'complete'
      order by started_at desc, id desc limit 1
    ),
    r_prev as (
      select id, started_at from poll_runs
      where environment = ${p.environment} and status = 'complete' and finished_at < ${w}::timestamptz
      order by started_at desc, id desc limit 1
    )
    insert into scope
    select order_uuid from order_events where environment = ${p.environment} and received_at >= ${lower}
    union
    select order_uuid from order_snapshots where environment = ${p.environment} and state_since >= ${lower}
    union
    select order_uuid from order_state_observations where environment = ${p.environment} and observed_at >= ${lower}
    union
    select s.order_uuid from order_snapshots s, r where s.environment = ${p.environment} and s.last_seen_run_id < r.id
    union
    select e.order_uuid from order_events e, r
    where e.environment = ${p.environment}
      and r.id is distinct from (select id from r_prev)
      and e.received_at >= coalesce((select started_at from r_prev) - make_interval(secs => ${lookback}), '-infinity')
    union
    select entity_id::uuid from discrepancies
    where environment = ${p.environment} and entity_type = 'order' and status in ('open', 'acknowledged')
      and kind::text in ${tx(orderKinds as string[])}`;
  await tx`analyze scope`;
  return { mode: 'incremental', reason: `changes since ${w}`, orders: result.count };
}

/** The SQL condition limiting a rule to the pass's scope; nothing for a full pass. */
export function inScope(tx: TransactionSql, p: RuleParams, column: 'e' | 's' | 'o' | 'g') {
  if (!p.scoped) return tx``;
  return tx`and ${tx(column)}.order_uuid in (select order_uuid from scope)`;
}
