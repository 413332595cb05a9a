import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { instructedCurrency, payoutCredits } from '../ledger/payout-credits.js';
import { latestPayoutEvents } from '../ledger/payouts.js';
import { findingCurrency, stakeCents } from '../reports/discrepancies.js';
import { unstatedCurrency } from '../payout-reports/contract-terms.js';
import { decimalAmount, REPORT_TIME_FORMAT } from '../reports/source.js';
import { noParameters, type Guard } from './operator-request.js';
import { sendJson, type Route } from './server.js';

const SERIES_POINTS = 30;

/**
 * The morning view, for the daemon's environment, in a handful of set-based statements:
 *  - open discrepancies by kind and age (first detected today, in the last 7 days, older; UTC days);
 *  - money at stake per kind and currency (the report's amount_cents of open findings);
 *  - open discrepancies over time, from discrepancy_history: each status change into 'open' adds one,
 *    each out of it removes one; summed per bucket and accumulated (30 points from the first change);
 *  - completed payouts per ISO week (of receipt): matched (credits with its reference sum to its
 *    amount) or not;
 *  - freshness: the last complete poll, the last finished pass (and its status), the last import.
 */
async function overview(database: Database, config: Pick<Config, 'PROVIDER_ENV' | 'CONTRACT_TERMS'>): Promise<Record<string, unknown>> {
  const { sql } = database;
  const env = config.PROVIDER_ENV;
  const unstated = unstatedCurrency(config.CONTRACT_TERMS);
  const byKind = await sql`
    select kind::text as kind,
           count(*) filter (where first_detected_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')::int as today,
           count(*) filter (where first_detected_at < date_trunc('day', now() at time zone 'UTC') at time zone 'UTC'
                              and first_detected_at >= now() - interval '7 days')::int as week,
           count(*) filter (where first_detected_at < now() - interval '7 days')::int as older,
           count(*)::int as open
    from discrepancies where environment = ${env} and status = 'open'
    group by kind order by kind`;
  const stake = await sql`
    with s as (
      select kind, ${stakeCents(sql)} as cents, ${findingCurrency(sql, unstated)} as currency
      from discrepancies d where environment = ${env} and status = 'open'
    )
    select kind::text as kind, currency, sum(cents)::text as amount_cents, ${decimalAmount(sql, sql`sum(cents)`)} as amount, count(*)::int as findings
    from s where cents is not null group by kind, currency order by kind, currency`;
  const series = await sql`
    with ev as (
      select h.at, (case when h.to_status = 'open' then 1 else 0 end) - (case when h.from_status = 'open' then 1 else 0 end) as delta
      from discrepancy_history h join discrepancies d on d.id = h.discrepancy_id
      where d.environment = ${env}
    ),
    b as (select min(at) as lo, greatest(now(), max(at)) as hi from ev),
    step as (select lo, greatest((hi - lo) / ${SERIES_POINTS}, interval '1 second') as w from b where lo is not null),
    ticks as (select i, lo + w * i as t from step, generate_series(1, ${SERIES_POINTS}) as i),
    per as (
      select least(${SERIES_POINTS}, greatest(1, ceil(extract(epoch from ev.at - step.lo) / extract(epoch from step.w))::int)) as i, sum(delta) as n
      from ev, step group by 1
    )
    select to_char(t at time zone 'UTC', ${REPORT_TIME_FORMAT}) as at,
           (sum(coalesce(per.n, 0)) over (order by ticks.i))::int as open
    from ticks left join per using (i) order by ticks.i`;
  const payouts = await sql`
    with latest as (${latestPayoutEvents(sql, env)}),
    -- Credits by the payout they pay, as report payouts matches them (ledger/payout-credits.ts
    -- payoutCredits): the page and its downloads must agree. Lines in two currencies have no sum,
    -- and a credit in another currency than the payout report's is not compared (reports/payouts.ts).
    credits as materialized (
      select l.payout_uuid, l.payout_reference, case when count(distinct upper(l.currency)) = 1 then sum(l.signed_cents) end as cents,
             min(upper(l.currency)) as currency,
             coalesce(bool_or(${instructedCurrency(sql, sql`l.remittance`)} <> upper(l.currency)), false) as fx
      from (${payoutCredits(sql, env)}) l
      group by l.payout_uuid, l.payout_reference
    ),
    judged as (
      select p.received_at,
             c.cents = p.amount_cents and not c.fx
               and coalesce((select coalesce(min(upper(w.currency)), ${unstated}::text) from payout_report_rows w
                             where w.environment = ${env} and w.payout_uuid = p.payout_uuid having count(*) > 0) = c.currency, true) as matched
      from latest p
      left join credits c on c.payout_uuid = p.payout_uuid and c.payout_reference = p.sepa_key
      where p.status = 'complete'
    )
    select to_char(date_trunc('week', received_at at time zone 'UTC'), 'IYYY-"W"IW') as week,
           count(*) filter (where matched)::int as matched,
           count(*) filter (where matched is not true)::int as unmatched
    from judged
    group by 1 order by 1`;
  const [fresh] = await sql`
    select
      (select to_char(max(finished_at) at time zone 'UTC', ${REPORT_TIME_FORMAT}) from poll_runs where environment = ${env} and status = 'complete') as last_poll,
      (select to_char(finished_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) || ' ' || status from reconcile_runs
        where environment = ${env} and finished_at is not null order by finished_at desc limit 1) as last_pass,
      (select to_char(max(imported_at) at time zone 'UTC', ${REPORT_TIME_FORMAT}) from bank_statements where environment = ${env}) as last_statement_import,
      (select jsonb_build_object('statements', statement_count, 'balances_unchecked', balances_unchecked, 'unbalanced', statements_unbalanced)
        from bank_statements where environment = ${env} order by imported_at desc, id desc limit 1) as last_statement_balances,
      to_char(now() at time zone 'UTC', ${REPORT_TIME_FORMAT}) as now`;
  const lastPass = typeof fresh?.last_pass === 'string' ? (fresh.last_pass as string).split(' ') : [];
  return {
    environment: env,
    open_by_kind: byKind,
    at_stake: stake,
    open_over_time: series,
    payouts_by_week: payouts,
    freshness: {
      now: fresh?.now ?? null,
      last_poll: fresh?.last_poll ?? null,
      last_pass: lastPass[0] ?? null,
      last_pass_status: lastPass[1] ?? null,
      last_statement_import: fresh?.last_statement_import ?? null,
      // of the last imported file: its statements, how many had balances not checked (a balance missing, or CSV), how many were stored unbalanced
      last_statement_balances: fresh?.last_statement_balances ?? null,
    },
  };
}

export function overviewRoutes(deps: { config: Config; guarded: Guard }): Route[] {
  const { config, guarded } = deps;
  return [
    {
      method: 'GET',
      path: '/api/session',
      // Who the token belongs to, which environment this daemon serves and the time zone the page shows
      // times in: the page's sign-in check.
      handler: guarded({
        parse: noParameters,
        handle: async (_req, res, _params, who) => sendJson(res, 200, { operator: who.name, environment: config.PROVIDER_ENV, time_zone: config.DISPLAY_TIME_ZONE }),
      }, { ledger: 'none' }),
    },
    {
      method: 'GET',
      path: '/api/overview',
      handler: guarded({ parse: noParameters, handle: async (_req, res, _params, _who, ledger) => sendJson(res, 200, await overview(ledger, config)) }),
    },
  ];
}
