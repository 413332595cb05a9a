import { retrying } from '../db/retry.js';
import type { Sql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { ProviderOrder } from '../provider/schemas.js';
import { errorCode, SQLSTATE } from '../db/errors.js';

export interface UpsertResult {
  newInRun: number;
  /** newInRun of each page, in the order of `pages`. */
  newInRunByPage: number[];
  observations: number;
}

/** One answer of GET /api/v1/orders, stamped with when it arrived. */
export interface PageToWrite {
  orders: readonly ProviderOrder[];
  observedAt: Date;
}

/**
 * Merges pages of GET /api/v1/orders into the ledger in one statement (a round trip per batch,
 * whatever the page count: per-page statements capped a full poll at ~250-330 pages/s on the 2-core
 * machine, most of the client's time going to socket writes of one statement per page), idempotently:
 *  - order_snapshots: insert, or move last_seen forward; state_since / state_since_run_id change
 *    only when the state changes (the missed-webhook grace period runs from state_since);
 *  - order_state_observations: a row on first sight and on every change, with the previous state.
 *
 * The caller never puts one order on two pages of a batch (write-batcher.ts splits there): one
 * statement sees each order once, so a state change between two reads of it (paging drift) still
 * becomes two observations, as with one statement per page. Within a page a repeated order counts
 * once (its first occurrence). Every row carries its own page's observedAt.
 *
 * `locked` reads the current rows FOR UPDATE in uuid order (`input` is sorted): two batches of one
 * run may carry the same order (paging drift) and are written concurrently; the lock makes the
 * previous state the one the update replaces, not a stale snapshot, and the fixed order keeps two
 * such statements from deadlocking. It is a lateral lookup by primary key on purpose: written as
 * `order_uuid in (select ...)`, the planner, with statistics from before the first big poll filled
 * the table, scanned every row of the environment (32 ms per page of 100 against 20,000 rows; the
 * lateral form: 7 ms, of which 0.4 ms the lookups; EXPLAIN ANALYZE, Postgres 15). The `where` on the
 * update keeps an older read (a page fetched earlier but written later, or by an earlier run) from
 * overwriting a newer one.
 *
 * New orders (none in `locked`) go in with plain inserts, not ON CONFLICT: on a first poll nearly
 * every order is new, and the speculative insertion (conflict pre-check, insert, confirm record) for
 * the snapshot and again for the observation made the statement ~30 % dearer (100,000 orders in
 * batches of 2,000, one backend: 2.8-3.3 s, now 2.0-2.1 s). Only a concurrent statement of the same
 * run can insert one of them meanwhile; ours then fails on the primary key and runs again, and the
 * order is an update that time. ON CONFLICT stays where a conflict is certain or possible: the
 * update of known orders, and a change back to a state this run already observed.
 *
 * The batch travels as one JSON parameter unpacked by json_to_recordset, as the webhook ledger
 * writes do: JSON.stringify is native, where postgres.js escapes array parameters in JavaScript.
 *
 * Returns how many of the batch's orders this run had not seen before, in all and by page (each
 * page's promise in the batcher settles with its own count), so poll_runs.orders counts each order
 * once however many pages it appeared on.
 */
export async function upsertOrdersPages(
  sql: Sql,
  environment: ProviderEnvironment,
  runId: number,
  pages: readonly PageToWrite[],
  options: { retryRaces?: boolean } = {},
): Promise<UpsertResult> {
  // Times travel once per page, not once per row: Postgres parses a timestamptz per row otherwise.
  const rows: { u: string; s: string; r: string | null; p: number }[] = [];
  const times: { p: number; a: string }[] = [];
  pages.forEach((page, p) => {
    // ISO text, not a Date: drizzle sets postgres.js's timestamp serializers to identity.
    times.push({ p, a: page.observedAt.toISOString() });
    for (const o of page.orders) rows.push({ u: o.uuid, s: o.state, r: o.external_reference_id ?? null, p });
  });
  if (rows.length === 0) return { newInRun: 0, newInRunByPage: pages.map(() => 0), observations: 0 };
  const rowsJson = JSON.stringify(rows);
  const timesJson = JSON.stringify(times);
  // Another statement may insert one of these orders after ours began (overlapping pages written
  // concurrently). Running again sees it in `locked` and merges as an update. Inside a transaction
  // the failed statement aborts it: the caller then retries the whole transaction (retryingInsertRaces)
  // and passes retryRaces: false.
  const merge = () => mergeBatch(sql, environment, runId, rowsJson, timesJson);
  const merged = options.retryRaces === false ? await merge() : await retryingInsertRaces(merge);
  const newInRunByPage = pages.map((_, p) => merged.newByPage[p] ?? 0);
  return { newInRun: newInRunByPage.reduce((a, b) => a + b, 0), newInRunByPage, observations: merged.observations };
}

// Each retry needs a new concurrent insert of an order of this batch, so a few attempts are plenty.
const INSERT_RACE_ATTEMPTS = 5;

/**
 * Runs `work` (one statement, or a whole transaction around upsertOrdersPages with retryRaces:
 * false) again when a concurrent statement of the run inserted one of its new orders first.
 */
export function retryingInsertRaces<T>(work: () => Promise<T>): Promise<T> {
  return retrying(work, { attempts: INSERT_RACE_ATTEMPTS, retryOn: isSnapshotInsertRace });
}

function isSnapshotInsertRace(error: unknown): boolean {
  return errorCode(error) === SQLSTATE.UNIQUE_VIOLATION && (error as { constraint_name?: unknown }).constraint_name === SNAPSHOTS_PK;
}

const SNAPSHOTS_PK = 'order_snapshots_environment_order_uuid_pk';

async function mergeBatch(
  sql: Sql,
  environment: ProviderEnvironment,
  runId: number,
  rowsJson: string,
  timesJson: string,
): Promise<{ newByPage: Record<number, number>; observations: number }> {
  const result = await sql<{ new_by_page: Record<number, number>; observations: number }[]>`
    with input as (
      select distinct on (e.order_uuid) e.order_uuid, e.state, e.external_reference_id, t.a as observed_at, e.p
      from rows from (json_to_recordset(${rowsJson}::json) as (u uuid, s text, r text, p int))
        with ordinality as e(order_uuid, state, external_reference_id, p, ord)
      join json_to_recordset(${timesJson}::json) as t(p int, a timestamptz) using (p)
      order by e.order_uuid, e.ord
    ),
    locked as (
      select l.* from input i cross join lateral (
        select s.order_uuid, s.state, s.last_seen_run_id
        from order_snapshots s
        where s.environment = ${environment}::provider_environment and s.order_uuid = i.order_uuid
        for update
      ) l
    ),
    -- Orders the ledger already holds: the conflict is certain, so ON CONFLICT only takes its
    -- update path (no speculative insertion).
    updated as (
      insert into order_snapshots as s (
        environment, order_uuid, state, external_reference_id, first_seen_at, last_seen_at,
        first_seen_run_id, last_seen_run_id, state_since, state_since_run_id
      )
      select ${environment}::provider_environment, i.order_uuid, i.state, i.external_reference_id, i.observed_at, i.observed_at,
             ${runId}::bigint, ${runId}::bigint, i.observed_at, ${runId}::bigint
      from input i join locked l using (order_uuid)
      order by i.order_uuid
      on conflict (environment, order_uuid) do update set
        state = excluded.state,
        external_reference_id = coalesce(excluded.external_reference_id, s.external_reference_id),
        last_seen_at = excluded.last_seen_at,
        last_seen_run_id = excluded.last_seen_run_id,
        state_since = case when s.state is distinct from excluded.state then excluded.state_since else s.state_since end,
        state_since_run_id = case when s.state is distinct from excluded.state then excluded.state_since_run_id else s.state_since_run_id end
      -- A later run's reading is newer whatever its stamp: runs take turns under the poll lock, so
      -- run ids grow with time, while the stamps are each polling process's wall clock, and a
      -- replica whose clock ran ahead (or one stepped back) left stamps that dropped every later
      -- run's listing (test/poller/clock-skew-listing.test.ts). Within a run the stamps decide.
      where s.last_seen_run_id < excluded.last_seen_run_id
         or (s.last_seen_run_id = excluded.last_seen_run_id and s.last_seen_at <= excluded.last_seen_at)
      returning s.order_uuid, s.state, s.last_seen_at as observed_at
    ),
    -- Orders not there when the statement began: a plain insert. A concurrent statement inserting
    -- the same order makes it fail with a unique violation, and the caller runs it again (the
    -- order then shows up in locked).
    inserted as (
      insert into order_snapshots (
        environment, order_uuid, state, external_reference_id, first_seen_at, last_seen_at,
        first_seen_run_id, last_seen_run_id, state_since, state_since_run_id
      )
      select ${environment}::provider_environment, i.order_uuid, i.state, i.external_reference_id, i.observed_at, i.observed_at,
             ${runId}::bigint, ${runId}::bigint, i.observed_at, ${runId}::bigint
      from input i
      where not exists (select from locked l where l.order_uuid = i.order_uuid)
      order by i.order_uuid
      returning order_uuid, state, last_seen_at as observed_at
    ),
    -- A first sighting cannot collide with an observation of this run: that would need a snapshot.
    first_observed as (
      insert into order_state_observations (environment, order_uuid, state, previous_state, observed_at, poll_run_id)
      select ${environment}::provider_environment, n.order_uuid, n.state, null, n.observed_at, ${runId}::bigint
      from inserted n
      returning 1
    ),
    -- A change back to a state already seen in this run (A, B, A) keeps the first observation.
    changed as (
      insert into order_state_observations (environment, order_uuid, state, previous_state, observed_at, poll_run_id)
      select ${environment}::provider_environment, u.order_uuid, u.state, l.state, u.observed_at, ${runId}::bigint
      from updated u join locked l using (order_uuid)
      where l.state is distinct from u.state
      on conflict (environment, order_uuid, state, poll_run_id) do nothing
      returning 1
    ),
    -- New to this run: inserted now, or last seen by an earlier run; by the page that carried it.
    new_in_run as (
      select n.order_uuid from inserted n
      union all
      select u.order_uuid from updated u join locked l using (order_uuid) where l.last_seen_run_id <> ${runId}::bigint
    )
    select
      (select coalesce(json_object_agg(p, n), '{}') from (
        select i.p, count(*)::int as n from new_in_run x join input i using (order_uuid) group by i.p
      ) by_page) as new_by_page,
      ((select count(*) from first_observed) + (select count(*) from changed))::int as observations`;
  const row = result[0];
  return { newByPage: row?.new_by_page ?? {}, observations: row?.observations ?? 0 };
}

