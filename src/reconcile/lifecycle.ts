import type { TransactionSql } from 'postgres';
import type { RuleParams } from './types.js';

/**
 * The lifecycle of a discrepancy, as two set-based statements over the pass's `found` table:
 *
 *  - upsert: a finding not yet in `discrepancies` is created `open`; one that exists has its
 *    last_checked_at (and current evidence) moved on; a `resolved` one whose evidence is back is
 *    reopened; an `acknowledged` one is reopened only when its evidence_hash differs from the hash a
 *    person acknowledged (so the machine never overrides a person about the same facts).
 *  - resolve: an `open` or `acknowledged` discrepancy of a kind this pass decided, absent from
 *    `found`, has lost its evidence: it becomes `resolved`, with what cleared it recorded.
 *
 * Every status change writes a discrepancy_history row (actor 'reconciler'). The old status comes
 * from a CTE over the same snapshot (`prev`): the statement cannot see its own update, and
 * RETURNING old.* needs Postgres 18. Operators' acks take the pass's advisory lock (ack.ts) so no
 * status change slips between `prev` and the update.
 */
export interface LifecycleCounts {
  opened: number;
  reopened: number;
}

export async function upsertFindings(tx: TransactionSql, p: RuleParams): Promise<LifecycleCounts> {
  const now = p.now.toISOString();
  const rows = await tx<{ opened: number; reopened: number }[]>`
    with prev as (
      select d.id, d.status
      from discrepancies d
      join found f on d.environment = f.environment and d.kind = f.kind and d.entity_type = f.entity_type
                  and d.entity_id = f.entity_id and d.subject = f.subject
    ),
    up as (
      insert into discrepancies as d (environment, kind, status, entity_type, entity_id, subject, external_reference_id,
                                      sepa_reference, expected, observed, details, evidence, evidence_hash,
                                      first_detected_at, last_checked_at)
      select environment, kind, 'open', entity_type, entity_id, subject, external_reference_id, sepa_reference,
             expected, observed, details, evidence, evidence_hash, ${now}::timestamptz, ${now}::timestamptz
      from found
      on conflict (environment, kind, entity_type, entity_id, subject) do update set
        last_checked_at = excluded.last_checked_at,
        status = case
          when d.status = 'resolved' then 'open'::discrepancy_status
          when d.status = 'acknowledged' and d.acknowledged_evidence_hash is distinct from excluded.evidence_hash
            then 'open'::discrepancy_status
          else d.status end,
        resolved_at = case when d.status = 'resolved' then null else d.resolved_at end,
        external_reference_id = coalesce(excluded.external_reference_id, d.external_reference_id),
        sepa_reference = coalesce(excluded.sepa_reference, d.sepa_reference),
        expected = excluded.expected,
        observed = excluded.observed,
        details = excluded.details,
        evidence = excluded.evidence,
        evidence_hash = excluded.evidence_hash
      returning d.id, d.status, d.evidence
    ),
    hist as (
      insert into discrepancy_history (discrepancy_id, at, from_status, to_status, actor, reason, evidence)
      select up.id, ${now}::timestamptz, prev.status, up.status, 'reconciler',
             case when prev.status is null then 'detected'
                  when prev.status = 'resolved' then 'evidence present again'
                  else 'evidence changed since it was acknowledged' end,
             up.evidence
      from up left join prev on prev.id = up.id
      where up.status = 'open' and prev.status is distinct from 'open'
      returning from_status
    )
    select (count(*) filter (where from_status is null))::int as opened,
           (count(*) filter (where from_status is not null))::int as reopened
    from hist`;
  return { opened: rows[0]?.opened ?? 0, reopened: rows[0]?.reopened ?? 0 };
}

/**
 * Resolves what lost its evidence. The history row keeps the previous evidence and what the ledger
 * shows now for the order (API state, the run that last listed it, the webhook that arrived for the
 * finding's state), so a person can see why the machine closed it.
 */
export async function resolveCleared(tx: TransactionSql, p: RuleParams, kinds: readonly string[]): Promise<number> {
  const now = p.now.toISOString();
  const result = await tx`
    with gone as (
      select d.id, d.status
      from discrepancies d
      where d.environment = ${p.environment}
        and d.kind::text in ${tx(kinds)}
        and d.status in ('open', 'acknowledged')
        and not exists (
          select 1 from found f
          where f.environment = d.environment and f.kind = d.kind and f.entity_type = d.entity_type
            and f.entity_id = d.entity_id and f.subject = d.subject)
    ),
    upd as (
      update discrepancies d
      set status = 'resolved', resolved_at = ${now}::timestamptz, last_checked_at = ${now}::timestamptz
      from gone
      where d.id = gone.id
      returning d.id, gone.status as from_status, d.kind, d.entity_type, d.entity_id, d.subject, d.evidence
    )
    insert into discrepancy_history (discrepancy_id, at, from_status, to_status, actor, reason, evidence)
    select upd.id, ${now}::timestamptz, upd.from_status, 'resolved', 'reconciler',
           case upd.kind
             when 'missed_webhook' then case when w.event_key is not null then 'the webhook arrived' else 'the poller no longer shows the state' end
             when 'state_mismatch' then 'webhook and API states agree again'
             when 'orphan_webhook' then 'a complete poll listed the order'
             else 'evidence no longer present' end,
           jsonb_build_object('previous', upd.evidence, 'api_state', s.state, 'api_last_seen_run_id', s.last_seen_run_id,
                              'webhook', case when w.event_key is null then null
                                              else jsonb_build_object('event_key', w.event_key, 'event_time', w.event_time) end)
    from upd
    left join order_snapshots s
      on s.environment = ${p.environment} and s.order_uuid = (case when upd.entity_type = 'order' then upd.entity_id::uuid end)
    left join lateral (
      select e.event_key, e.event_time from order_events e
      where upd.kind = 'missed_webhook' and e.environment = ${p.environment}
        and e.order_uuid = (case when upd.entity_type = 'order' then upd.entity_id::uuid end) and e.order_state = upd.subject
      order by e.event_time_sortable limit 1
    ) w on true`;
  return result.count;
}
