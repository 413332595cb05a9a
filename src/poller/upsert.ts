import type { Sql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { ProviderOrder } from '../provider/schemas.js';

/**
 * Merges one page of GET /api/v1/orders into the ledger in one statement (a round trip per page,
 * whatever the page size), idempotently:
 *  - order_snapshots: insert, or move last_seen forward; state_since / state_since_run_id change
 *    only when the state changes (the missed-webhook grace period runs from state_since);
 *  - order_state_observations: a row on first sight and on every change, with the previous state.
 *
 * `locked` reads the current rows FOR UPDATE in uuid order (`input` is sorted): two pages of one run
 * may carry the same order (paging drift) and are written concurrently; the lock makes the previous
 * state the one the update replaces, not a stale snapshot, and the fixed order keeps two such
 * statements from deadlocking. It is a lateral lookup by primary key on purpose: written as
 * `order_uuid in (select ...)`, the planner, with statistics from before the first big poll filled
 * the table, scanned every row of the environment (32 ms per page of 100 against 20,000 rows; the
 * lateral form: 7 ms, of which 0.4 ms the lookups; EXPLAIN ANALYZE, Postgres 15). The `where` on the update keeps an older read (a page fetched earlier but written
 * later) from overwriting a newer one.
 *
 * Returns how many of the page's orders this run had not seen before, so poll_runs.orders counts
 * each order once however many pages it appeared on.
 */
export async function upsertOrdersPage(
  sql: Sql,
  environment: ProviderEnvironment,
  runId: number,
  observedAt: Date,
  orders: readonly ProviderOrder[],
): Promise<{ newInRun: number; observations: number }> {
  if (orders.length === 0) return { newInRun: 0, observations: 0 };
  // ISO text, not a Date: postgres.js serialises parameters by the type the server describes.
  const at = observedAt.toISOString();
  const rows = JSON.stringify(orders.map((o) => ({ u: o.uuid, s: o.state, r: o.external_reference_id ?? null })));
  const result = await sql<{ new_in_run: number; observations: number }[]>`
    with input as (
      select distinct on (order_uuid) (e.v ->> 'u')::uuid as order_uuid, e.v ->> 's' as state, e.v ->> 'r' as external_reference_id
      from jsonb_array_elements(${rows}::jsonb) with ordinality as e(v, ord)
      order by order_uuid, e.ord
    ),
    locked as (
      select l.* from input i cross join lateral (
        select s.order_uuid, s.state, s.last_seen_run_id
        from order_snapshots s
        where s.environment = ${environment}::provider_environment and s.order_uuid = i.order_uuid
        for update
      ) l
    ),
    upserted as (
      insert into order_snapshots as s (
        environment, order_uuid, state, external_reference_id, first_seen_at, last_seen_at,
        first_seen_run_id, last_seen_run_id, state_since, state_since_run_id
      )
      select ${environment}::provider_environment, i.order_uuid, i.state, i.external_reference_id, ${at}::timestamptz, ${at}::timestamptz,
             ${runId}::bigint, ${runId}::bigint, ${at}::timestamptz, ${runId}::bigint
      from input i left join locked l using (order_uuid)
      order by i.order_uuid
      on conflict (environment, order_uuid) do update set
        state = excluded.state,
        external_reference_id = coalesce(excluded.external_reference_id, s.external_reference_id),
        last_seen_at = excluded.last_seen_at,
        last_seen_run_id = excluded.last_seen_run_id,
        state_since = case when s.state is distinct from excluded.state then excluded.state_since else s.state_since end,
        state_since_run_id = case when s.state is distinct from excluded.state then excluded.state_since_run_id else s.state_since_run_id end
      where s.last_seen_at <= excluded.last_seen_at
      returning s.order_uuid, s.state, (s.xmax = 0) as inserted
    ),
    observed as (
      insert into order_state_observations (environment, order_uuid, state, previous_state, observed_at, poll_run_id)
      select ${environment}::provider_environment, u.order_uuid, u.state, l.state, ${at}::timestamptz, ${runId}::bigint
      from upserted u left join locked l using (order_uuid)
      where l.order_uuid is null or l.state is distinct from u.state
      on conflict (environment, order_uuid, state, poll_run_id) do nothing
      returning 1
    )
    select
      -- New to this run: inserted now, or last seen by an earlier run. A row that did not exist when
      -- the statement began but was updated (not inserted) was inserted meanwhile by a concurrent
      -- page write of this same run (overlapping pages), so it is not new: counting it gave 8001 of 8000.
      (select count(*) from upserted u left join locked l using (order_uuid)
        where u.inserted or (l.order_uuid is not null and l.last_seen_run_id <> ${runId}::bigint))::int as new_in_run,
      (select count(*) from observed)::int as observations`;
  const row = result[0];
  return { newInRun: row?.new_in_run ?? 0, observations: row?.observations ?? 0 };
}
