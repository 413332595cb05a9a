import type { TransactionSql } from 'postgres';
import { resolvableInScope } from './scope.js';
import { ORDER_STATES_WITH_TOPIC, type RuleParams } from './types.js';

/**
 * The lifecycle of a discrepancy, as two set-based statements over the pass's `found` table:
 *
 *  - upsert: a finding not yet in `discrepancies` is created `open`; one that exists and whose
 *    evidence changed has it (and last_checked_at) moved on; a `resolved` one whose evidence is back is
 *    reopened, as `acknowledged` again when a person had acknowledged exactly this evidence (same
 *    hash: a resolve and reopen in between changed no fact); an `acknowledged` one is reopened only
 *    when its evidence_hash differs from the hash a person acknowledged (so the machine never
 *    overrides a person about the same facts).
 *  - resolve: an `open` or `acknowledged` discrepancy of a kind this pass decided, absent from
 *    `found`, has lost its evidence: it becomes `resolved`, with what cleared it recorded (an
 *    incremental pass: order findings of its scope only, scope.ts).
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
          when d.status = 'resolved' and d.acknowledged_at is not null
               and d.acknowledged_evidence_hash is not distinct from excluded.evidence_hash
            then 'acknowledged'::discrepancy_status
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
      -- Only a finding whose status or evidence changes is written. Every complete pass decides every
      -- open and acknowledged finding (judged again, or known unchanged: scope.ts), so their
      -- last_checked_at is the latest complete pass's start (read so by the report,
      -- reports/discrepancies.ts). Rewriting each unchanged one was the
      -- largest step of a pass with nothing new, and grew as their dead versions did: 4,000
      -- findings at 1,000,000 orders, 184-218 ms, 0.9-1.5 s a dozen passes later (33-58 ms now;
      -- leaving them out before the insert, which locks those it skips, was no faster; bench/README.md).
      where d.status = 'resolved'
         or (d.status = 'acknowledged' and d.acknowledged_evidence_hash is distinct from excluded.evidence_hash)
         or (d.expected, d.observed, d.details, d.evidence, d.evidence_hash)
              is distinct from (excluded.expected, excluded.observed, excluded.details, excluded.evidence, excluded.evidence_hash)
         or (excluded.external_reference_id is not null and excluded.external_reference_id is distinct from d.external_reference_id)
         or (excluded.sepa_reference is not null and excluded.sepa_reference is distinct from d.sepa_reference)
      returning d.id, d.status, d.evidence
    ),
    hist as (
      insert into discrepancy_history (discrepancy_id, at, from_status, to_status, actor, reason, evidence)
      select up.id, ${now}::timestamptz, prev.status, up.status, 'reconciler',
             case when prev.status is null then 'detected'
                  when prev.status = 'resolved' and up.status = 'acknowledged'
                    then 'evidence present again, unchanged since it was acknowledged: the acknowledgement stands'
                  when prev.status = 'resolved' then 'evidence present again'
                  else 'evidence changed since it was acknowledged' end,
             up.evidence
      from up left join prev on prev.id = up.id
      where prev.status is distinct from up.status
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
        ${resolvableInScope(tx, p)}
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
             when 'missed_webhook' then case
               when w.event_key is not null then 'the webhook arrived'
               when seen.since is null then 'the poller no longer shows the state'
               else format('the poller first saw %s at %s, less than the grace period (%s s) before this pass',
                           upd.subject, to_char(seen.since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ${p.graceSeconds}::int) end
             when 'state_mismatch' then case
               when s.state is not distinct from latest.order_state then 'webhook and API states agree again'
               when s.state is not null and s.state not in ${tx(ORDER_STATES_WITH_TOPIC)} then format('the API state %s has no webhook topic', s.state)
               else format('not proven with the grace period of %s s (API state %s, latest webhook state %s)',
                           ${p.graceSeconds}::int, coalesce(s.state, 'none'), coalesce(latest.order_state, 'none')) end
             when 'orphan_webhook' then case
               -- Listed by a run after the one that proved the orphan: a listing before it (the
               -- order's last_seen_run_id from an earlier poll) is no reason it resolved.
               when s.last_seen_run_id is not null and upd.evidence->>'poll_run_id' ~ '^[0-9]{1,18}$'
                    and s.last_seen_run_id > (upd.evidence->>'poll_run_id')::bigint then 'a poll listed the order'
               else format('not proven with the grace period of %s s', ${p.graceSeconds}::int) end
             else 'evidence no longer present' end,
           jsonb_build_object('previous', upd.evidence, 'api_state', s.state, 'api_last_seen_run_id', s.last_seen_run_id,
                              'grace_seconds', ${p.graceSeconds}::int,
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
    ) w on true
    left join lateral (
      select least(case when s.state = upd.subject then s.state_since end,
                   (select min(o.observed_at) from order_state_observations o
                    where o.environment = ${p.environment} and o.order_uuid = (case when upd.entity_type = 'order' then upd.entity_id::uuid end)
                      and o.state = upd.subject)) as since
      where upd.kind = 'missed_webhook'
    ) seen on true
    left join lateral (
      select e.order_state from order_events e
      where upd.kind = 'state_mismatch' and e.environment = ${p.environment}
        and e.order_uuid = (case when upd.entity_type = 'order' then upd.entity_id::uuid end)
      order by e.event_time_sortable desc, e.event_key desc limit 1
    ) latest on true`;
  return result.count;
}
