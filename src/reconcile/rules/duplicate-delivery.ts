import type { TransactionSql } from 'postgres';
import { ISO_FORMAT } from '../found.js';
import { stage } from '../stage.js';
import { reparsedSince } from '../scope.js';
import type { RuleParams } from '../types.js';
import { differingMembers } from './retry-body.js';

/**
 * duplicate_delivery: a delivery of an event beyond the one that was applied, i.e. every
 * webhook_deliveries row with an event_key and `applied = false` (the receiver decides `applied`
 * in the database: at most one applied delivery per event key, the first to commit).
 * A retry is normal provider behaviour (spec: "the same event may be delivered more than once"),
 * applied once by the receiver; we record it so it counts in metrics and in `--status all`, created
 * already `resolved` with a history row, so it never burdens the open list.
 *
 * No grace period and no lifecycle: the fact never changes, so the insert is ON CONFLICT DO NOTHING
 * and a second pass writes nothing (not even last_checked_at).
 *
 * Retries are found through the partial index webhook_deliveries_retry_idx (only unapplied
 * deliveries, ~1 % of the table), so even the first pass of an environment reads the retries alone
 * instead of joining all deliveries with their events (5,000,000 deliveries: 16 s before). Only the
 * retries look up their event's applied delivery (first_delivery_id) by the primary key of
 * webhook_applied_events. Later passes look
 * only at retries received since the last complete pass minus a margin (one hour), which covers a
 * delivery whose transaction took its received_at (= now() at its start) before the previous pass
 * began but committed after it: the receiver commits within its 5 s answer deadline. After a reparse
 * that changed deliveries (scope.ts reparsedSince) every retry is looked at: a delivery a reparse
 * turned into a retry keeps its old received_at.
 *
 * A delivery with the event's key whose body says something else (retry-body.ts: other values,
 * not just other bytes) is not a retry: it claims the event with other facts, and the applied
 * delivery's stand. It is recorded `open`, naming the members that differ, for a person to check
 * with the provider; like a retry it is never applied and never resolves by itself. Its bytes are
 * compared with the applied delivery's where that is still stored (retention may have retired its
 * month: then it counts as a retry, as before any comparison).
 */
export const DUPLICATE_DELIVERY_MARGIN_SECONDS = 3600;

export async function recordDuplicateDeliveries(tx: TransactionSql, p: RuleParams): Promise<number> {
  const since = await tx<{ since: string | null }[]>`
    select to_char((max(started_at) - make_interval(secs => ${DUPLICATE_DELIVERY_MARGIN_SECONDS})) at time zone 'UTC', ${ISO_FORMAT}) as since
    from reconcile_runs where environment = ${p.environment} and status = 'complete'`;
  // A reparse that made deliveries retries left them their old received_at: every retry is looked
  // at then, as in an environment's first pass.
  const previous = since[0]?.since ?? null;
  const windowStart = previous === null || (await reparsedSince(tx, p.environment, previous)) ? '-infinity' : previous;
  const now = p.now.toISOString();
  // Found first (with the order or invoice reference, looked up by primary key per retry: as left
  // joins the planner hashed all of order_events), described after. CREATE TABLE AS runs the
  // lookups in parallel (stage.ts); the predicate repeats the partial index's condition so the
  // planner can use it, and the applied-delivery check costs nothing on ~1 % of rows and keeps an
  // event's applied delivery out even if a row's flag were ever wrong.
  // The applied delivery's bytes are looked up by primary key (its partition's) beside the retry's
  // own, which the scan has read anyway; only bodies that differ are kept, for retry-body.ts.
  await stage(tx, 'duplicate_found', tx`
    select w.id, w.environment, w.event_key, w.topic, w.entity_type, w.entity_id, w.received_at, e.delivery_id as first_delivery_id,
           coalesce(
             (select oe.external_reference_id from order_events oe where oe.environment = w.environment and oe.event_key = w.event_key),
             (select ie.external_reference_id from invoice_events ie where ie.environment = w.environment and ie.event_key = w.event_key)
           ) as external_reference_id,
           case when a.raw_body <> w.raw_body then w.raw_body end as body,
           case when a.raw_body <> w.raw_body then a.raw_body end as applied_body
    from webhook_deliveries w
    join webhook_applied_events e
      on e.environment = w.environment and e.event_day = webhook_event_day(w.event_time_sortable) and e.event_key = w.event_key
    left join webhook_deliveries a on a.id = e.delivery_id and a.received_at = e.received_at
    where w.environment = ${p.environment}
      and w.event_key is not null and not w.applied
      and w.received_at >= ${windowStart}::timestamptz
      and w.id <> e.delivery_id`);
  // A retry repeats its bytes, so these are few.
  const unlike = await tx<{ id: string; applied_body: Buffer; body: Buffer }[]>`
    select id::text as id, applied_body, body from pg_temp.duplicate_found where body is not null`;
  const differing = unlike.flatMap((row) => {
    const members = differingMembers(row.applied_body, row.body);
    return members.length === 0 ? [] : [{ id: row.id, members: members.join(', ') }];
  });
  const result = await tx`
    with differing as (
      select x.id, x.members from json_to_recordset(${JSON.stringify(differing)}::json) as x(id bigint, members text)
    ),
    dup as (
      insert into discrepancies as d (environment, kind, status, entity_type, entity_id, subject, external_reference_id,
                                      expected, observed, details, evidence, evidence_hash,
                                      first_detected_at, last_checked_at, resolved_at)
      select w.environment, 'duplicate_delivery',
             case when x.id is null then 'resolved' else 'open' end::discrepancy_status,
             'webhook_delivery', w.id::text, '',
             w.external_reference_id,
             w.first_delivery_id::text, w.id::text,
             case when x.id is null
               then format('Delivery %s repeats event %s (%s %s %s) first applied from delivery %s; stored, not applied again.',
                           w.id, left(w.event_key, 12), w.topic, w.entity_type, w.entity_id, w.first_delivery_id)
               else format('Delivery %s carries event %s (%s %s %s) of delivery %s, which was applied, but its body differs in %s: '
                           'stored, not applied; the applied delivery''s values stand. Check with the provider which is right.',
                           w.id, left(w.event_key, 12), w.topic, w.entity_type, w.entity_id, w.first_delivery_id, x.members)
             end,
             jsonb_build_object('event_key', w.event_key, 'topic', w.topic, 'entity_type', w.entity_type,
                                'entity_id', w.entity_id, 'first_delivery_id', w.first_delivery_id,
                                'received_at', to_char(w.received_at at time zone 'UTC', ${ISO_FORMAT}))
               || case when x.id is null then '{}'::jsonb else jsonb_build_object('differing_members', x.members) end,
             md5(w.event_key || '|' || w.id::text),
             ${now}::timestamptz, ${now}::timestamptz, case when x.id is null then ${now}::timestamptz end
      from pg_temp.duplicate_found w
      left join differing x on x.id = w.id
      on conflict (environment, kind, entity_type, entity_id, subject) do nothing
      returning d.id, d.status, d.evidence
    )
    insert into discrepancy_history (discrepancy_id, at, from_status, to_status, actor, reason, evidence)
    select id, ${now}::timestamptz, null, status, 'reconciler',
           case when status = 'resolved' then 'duplicate delivery of an applied event: recorded already resolved'
                else 'a delivery of an applied event with another body: recorded open' end,
           evidence
    from dup`;
  return result.count;
}
