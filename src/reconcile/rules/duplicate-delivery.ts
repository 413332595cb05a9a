import type { TransactionSql } from 'postgres';
import { ISO_FORMAT } from '../found.js';
import type { RuleParams } from '../types.js';

/**
 * duplicate_delivery: a delivery of an event beyond the one that was applied, i.e. every
 * webhook_deliveries row whose event_key has a webhook_events row with a different
 * first_delivery_id. A retry is normal provider behaviour (spec: "the same event may be delivered
 * more than once"), applied once by the receiver; we record it so it counts in metrics and in
 * `--status all`, created already `resolved` with a history row, so it never burdens the open list.
 *
 * No grace period and no lifecycle: the fact never changes, so the insert is ON CONFLICT DO NOTHING
 * and a second pass writes nothing (not even last_checked_at).
 *
 * Only deliveries received since the last complete pass (minus a margin) are examined, because
 * deliveries are append-only and this is the largest table: at 5,000,000 deliveries a full
 * join costs seconds on every pass for nothing. The margin (one hour) covers a delivery whose
 * transaction took its received_at (= now() at its start) before the previous pass began but
 * committed after it: the receiver commits within its 5 s answer deadline, so an hour is ample.
 * The first pass of an environment (no complete run yet) examines everything.
 */
export const DUPLICATE_DELIVERY_MARGIN_SECONDS = 3600;

export async function recordDuplicateDeliveries(tx: TransactionSql, p: RuleParams): Promise<number> {
  const since = await tx<{ since: string | null }[]>`
    select to_char((max(started_at) - make_interval(secs => ${DUPLICATE_DELIVERY_MARGIN_SECONDS})) at time zone 'UTC', ${ISO_FORMAT}) as since
    from reconcile_runs where environment = ${p.environment} and status = 'complete'`;
  const windowStart = since[0]?.since ?? '-infinity';
  const now = p.now.toISOString();
  // Found first, described after: the reference lookups then probe order_events and invoice_events
  // by primary key for the duplicates only. CREATE TABLE AS may use a parallel plan where
  // INSERT ... SELECT may not: the first pass's join of 5,000,000 deliveries with their events took
  // 9.6 s serial and 4.7 s parallel (bench/reconcile.ts seed, 2 cores).
  await tx`
    create temporary table duplicate_found on commit drop as
    select w.id, w.environment, w.event_key, w.topic, w.entity_type, w.entity_id, w.received_at, e.first_delivery_id
    from webhook_deliveries w
    join webhook_events e on e.environment = w.environment and e.event_key = w.event_key
    where w.environment = ${p.environment}
      and w.received_at >= ${windowStart}::timestamptz
      and w.id <> e.first_delivery_id`;
  const result = await tx`
    with dup as (
      insert into discrepancies as d (environment, kind, status, entity_type, entity_id, subject, external_reference_id,
                                      expected, observed, details, evidence, evidence_hash,
                                      first_detected_at, last_checked_at, resolved_at)
      select w.environment, 'duplicate_delivery', 'resolved', 'webhook_delivery', w.id::text, '',
             coalesce(
               (select oe.external_reference_id from order_events oe where oe.environment = w.environment and oe.event_key = w.event_key),
               (select ie.external_reference_id from invoice_events ie where ie.environment = w.environment and ie.event_key = w.event_key)),
             w.first_delivery_id::text, w.id::text,
             format('Delivery %s repeats event %s (%s %s %s) first applied from delivery %s; stored, not applied again.',
                    w.id, left(w.event_key, 12), w.topic, w.entity_type, w.entity_id, w.first_delivery_id),
             jsonb_build_object('event_key', w.event_key, 'topic', w.topic, 'entity_type', w.entity_type,
                                'entity_id', w.entity_id, 'first_delivery_id', w.first_delivery_id,
                                'received_at', to_char(w.received_at at time zone 'UTC', ${ISO_FORMAT})),
             md5(w.event_key || '|' || w.id::text),
             ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      from pg_temp.duplicate_found w
      on conflict (environment, kind, entity_type, entity_id, subject) do nothing
      returning d.id, d.evidence
    )
    insert into discrepancy_history (discrepancy_id, at, from_status, to_status, actor, reason, evidence)
    select id, ${now}::timestamptz, null, 'resolved', 'reconciler', 'duplicate delivery of an applied event: recorded already resolved', evidence
    from dup`;
  return result.count;
}
