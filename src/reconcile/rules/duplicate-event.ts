import type { TransactionSql } from 'postgres';
import { sepaClaims } from '../../ledger/sepa-claims.js';
import { insertIntoFound } from '../found.js';
import { inScope } from '../scope.js';
import { stage } from '../stage.js';
import type { Rule, RuleParams } from '../types.js';

/**
 * duplicate_event: two distinct events (different event_key, so not retries of one event) claim the
 * same change. No grace period: events are immutable once applied, and a retry inside the retry
 * window shares its event_key (it is a duplicate_delivery, never counted here), so waiting could not
 * make the evidence go away.
 *
 * Three shapes, each one statement:
 *  - orders: >= 2 order_events with the same order_uuid and order_state next to each other in
 *    event_time order (e.g. two order/confirmed with different event_time and no other state between
 *    them: an order that went confirmed, pending, confirmed changed twice). Entity the order,
 *    subject = the state; the events listed are those next to one of their state.
 *  - payouts sharing a SEPA reference: >= 2 distinct payout_uuid in payout_events with one
 *    SEPA reference (sepa-claims.ts sepaKey: any case, no blanks around it). The payout the provider announced first holds it (earliest event_time,
 *    the provider's own clock, then earliest received_at, then uuid: stable, since applied rows
 *    never change; arrival alone is not evidence, as retries reorder deliveries); each later payout is a
 *    finding of its own (entity that payout, subject = the SEPA reference): it is the claim a
 *    person has to check against the bank, and a third claimant is a new finding.
 *  - one payout reported twice: >= 2 payout_events of one payout_uuid with the same status and
 *    different event_key, next to each other in event time (complete, cancelled, complete is two
 *    changes, as for orders). Subject = 'status:<status>' so it cannot collide with a SEPA reference.
 *
 * Payout events are few (one per payout and status), so the payout statements look at all of them,
 * in incremental passes too; they read nothing else, so a pass that leaves the payout kinds standing
 * because no payout event is new (invoice-scope.ts) leaves these findings standing with them
 * (RuleParams.payoutsStand; scope.ts resolvableInScope).
 *
 * Never resolves by itself (the events stay); a person acknowledges it. The evidence hash covers the
 * sorted event keys (or payout uuids), so a third claimant reopens an acknowledged finding.
 */
export const duplicateEvent: Rule = {
  kind: 'duplicate_event',
  entities: ['order', 'payout'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    // Count first (an index-only scan of order_events_state_idx, no per-group strings), staged so
    // that the describing join knows it has ~1,000 groups, not the planner's guess of ~200,000
    // (which chose a hash join over all of order_events: 1 s of the rule's 2.3 s at 1,000,000
    // orders); then describe only the duplicated groups through the index. Aggregating text for
    // every order cost 1.3 s at 100,000.
    await stage(tx, 'duplicate_order_groups', tx`
      select g.order_uuid, g.order_state from order_events g
      where g.environment = ${p.environment} ${inScope(tx, p, 'g')}
      group by g.order_uuid, g.order_state
      having count(*) > 1`);
    await tx`analyze pg_temp.duplicate_order_groups`;
    const orders = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'duplicate_event', 'order', g.order_uuid::text, g.order_state,
             g.external_reference_id, null, '1', g.n::text,
             format('%s distinct order/%s events for one order (event times %s).', g.n, g.order_state, g.times),
             jsonb_build_object('state', g.order_state, 'events', g.events),
             md5(g.keys)
      from (
        select e.order_uuid, e.order_state, count(*) as n, max(e.external_reference_id) as external_reference_id,
               string_agg(e.event_time, ', ' order by e.event_time_sortable, e.event_key) as times,
               string_agg(e.event_key, ',' order by e.event_key) as keys,
               jsonb_agg(jsonb_build_object('event_key', e.event_key, 'event_time', e.event_time)
                         order by e.event_time_sortable, e.event_key) as events
        from (
          -- Each event of the candidate orders beside its neighbours in time: only events next to
          -- one of the same state claim the same change. confirmed, pending, confirmed is an order
          -- that went back (upsert.ts keeps such returns): two changes to confirmed, no duplicate.
          select e.*, lag(e.order_state) over w as state_before, lead(e.order_state) over w as state_after
          from (select distinct order_uuid from pg_temp.duplicate_order_groups) d
          join order_events e on e.environment = ${p.environment} and e.order_uuid = d.order_uuid
          window w as (partition by e.order_uuid order by e.event_time_sortable, e.event_key)
        ) e
        where e.state_before = e.order_state or e.state_after = e.order_state
        group by e.order_uuid, e.order_state
      ) g`;
    if (p.payoutsStand) return orders.count;
    const sepa = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'duplicate_event', 'payout', g.payout_uuid, g.sepa_instruction_id,
             null, g.sepa_instruction_id, g.first_payout, g.payout_uuid,
             format('Payout %s carries SEPA reference %s, which payout %s reported first.', g.payout_uuid, g.sepa_instruction_id, g.first_payout),
             jsonb_build_object('sepa_reference', g.sepa_instruction_id, 'first_payout', g.first_payout, 'payout', g.payout_uuid),
             md5(g.first_payout || '|' || g.payout_uuid)
      from (
        select sepa_instruction_id, payout_uuid::text as payout_uuid, first_payout::text as first_payout
        from (${sepaClaims(tx, p.environment)}) claims
      ) g
      where g.payout_uuid <> g.first_payout`;
    const repeated = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'duplicate_event', 'payout', g.payout_uuid::text, 'status:' || g.status,
             null, g.sepa_instruction_id, '1', g.n::text,
             format('%s distinct payout/%s events for one payout.', g.n, g.status),
             jsonb_build_object('status', g.status, 'event_keys', g.key_list),
             md5(g.keys)
      from (
        -- Only events next to one of the same status, in the provider's time order: a payout that
        -- went complete, cancelled, complete changed twice, as an order that went confirmed,
        -- pending, confirmed did (above), and is no duplicate.
        select payout_uuid, status, count(*) as n, max(sepa_instruction_id) as sepa_instruction_id,
               string_agg(event_key, ',' order by event_key) as keys,
               jsonb_agg(event_key order by event_key) as key_list
        from (
          select payout_uuid, status, sepa_instruction_id, event_key,
                 lag(status) over w as status_before, lead(status) over w as status_after
          from payout_events
          where environment = ${p.environment}
          window w as (partition by payout_uuid order by event_time_sortable nulls last, received_at, event_key)
        ) e
        where e.status_before = e.status or e.status_after = e.status
        group by payout_uuid, status
        having count(*) > 1
      ) g`;
    return orders.count + sepa.count + repeated.count;
  },
};
