import type { TransactionSql } from 'postgres';
import { ISO_FORMAT, insertIntoFound } from '../found.js';
import { inScope } from '../scope.js';
import { ORDER_STATES_WITH_TOPIC, type Rule, type RuleParams } from '../types.js';

/**
 * state_mismatch: after the grace period, the latest webhook state of an order and the API's state
 * disagree in a way no missed webhook explains.
 *
 * Definitions, for order O in one environment:
 *  - L = O's latest order event, the greatest (event_time_sortable, event_key). event_time_sortable
 *    has all nine fractional digits, so two events inside one microsecond still order correctly;
 *    arrival order and truncated timestamps are never used (retries and reordering would flip them).
 *  - A = the API's state (order_snapshots.state), shown since `state_since`.
 *
 * Fires iff all of:
 *  1. A <> L.order_state;
 *  2. A has a webhook topic. When A has none (shipped, complete, ...) the provider never sends a
 *     webhook for it, so the webhook state legitimately stays at the last topic-bearing state; the
 *     spec does not publish the transition graph, so we cannot tell lag from contradiction there and
 *     say nothing rather than raise false alarms;
 *  3. some order event of O carries A. Otherwise the webhook for A is what is missing: that is
 *     missed_webhook (after grace), not a mismatch;
 *  4. state_since <= now - grace: the API has held A for the whole grace period;
 *  5. L.received_at <= now - grace: the latest webhook is old enough for the poller to have seen the
 *     change it reports (an order canceled a minute ago has a canceled webhook before any poll);
 *  6. the poll that last listed O (order_snapshots.last_seen_run_id) began after L arrived and after
 *     L's event_time. A is only evidence against L when the API was asked after L happened: with a
 *     poll, then order/canceled, and no poll since (the API down longer than the grace period), the
 *     API's "confirmed" is older news than the webhook, not a contradiction;
 *  7. no other event of O with L's event_time carries A. Events of equal event_time have no order
 *     the provider states (L's tie-break by event_key only makes L well defined), so when one of
 *     them says A the stream does not contradict the API.
 * So a mismatch is a webhook stream whose newest event contradicts an API state that the stream
 * itself also reported: webhooks say declined (latest) while the API says confirmed and a confirmed
 * webhook exists with an earlier event_time; or the API went back to a state the webhooks had left.
 *
 * Resolves when L and A agree again, or A becomes a no-topic state. Subject ''; the evidence hash
 * covers A, L's state and L's event_key, so a new contradicting event reopens an acknowledged one.
 */
export const stateMismatch: Rule = {
  kind: 'state_mismatch',
  entities: ['order'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const cutoff = tx`${p.now.toISOString()}::timestamptz - make_interval(secs => ${p.graceSeconds})`;
    const result = await tx`
      -- MATERIALIZED: the mismatches are found first, then described; inlined, the planner joined
      -- the description lookup below to every order before filtering (26 s at 1,000,000 orders).
      with m as materialized (
        select l.order_uuid, l.order_state, l.event_key, s.state, s.state_since, s.external_reference_id
        from (
          -- L for every order: a forward index-only scan of order_events_order_idx, which holds each
          -- order's events newest first with their state and received_at, so DISTINCT ON keeps each
          -- order's first entry with neither a sort nor the heap (forward: src/schema/events.ts).
          -- Measured at 1,000,000 orders / 2,000,000 events: a sort of order_events and DISTINCT ON
          -- 4.7-6.5 s; a merge join of snapshots and events with a max() per order 8.6 s; a
          -- LATERAL ... ORDER BY ... LIMIT 1 per snapshot 11 s (17 s even index-only).
          select distinct on (e.environment, e.order_uuid) e.order_uuid, e.order_state, e.event_key, e.received_at, e.event_time_sortable
          from order_events e
          where e.environment = ${p.environment} ${inScope(tx, p, 'e')}
          order by e.environment, e.order_uuid, e.event_time_sortable desc, e.event_key desc
        ) l
        join order_snapshots s on s.environment = ${p.environment} and s.order_uuid = l.order_uuid
        -- Condition 6: by primary key, for the orders whose states differ.
        join poll_runs r on r.id = s.last_seen_run_id
        -- Condition 3, as a LATERAL ... LIMIT 1 rather than EXISTS: a lookup by index for the few
        -- orders the join keeps. As EXISTS the planner chose, depending on ANALYZE's sample of a
        -- 1,000,000-order ledger, either that or a hash of all 2,000,000 events' (order, state):
        -- 1.6 s or 3.2 s for the same rule (EXPLAIN ANALYZE, six ANALYZE runs; bench/README.md).
        cross join lateral (
          select 1 from order_events a
          where a.environment = ${p.environment} and a.order_uuid = s.order_uuid and a.order_state = s.state
          limit 1
        ) seen
        -- Condition 7, the same way: another event with L's event_time carrying A.
        left join lateral (
          select 1 as found from order_events t
          where t.environment = ${p.environment} and t.order_uuid = s.order_uuid
            and t.event_time_sortable = l.event_time_sortable and t.order_state = s.state
          limit 1
        ) tie on true
        where s.state <> l.order_state
          and tie.found is null
          and s.state in ${tx(ORDER_STATES_WITH_TOPIC)}
          and s.state_since <= ${cutoff}
          and l.received_at <= ${cutoff}
          and r.started_at > greatest(l.received_at, coalesce(l.event_time_sortable::timestamptz, l.received_at))
      )
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'state_mismatch', 'order', m.order_uuid::text, '',
             coalesce(m.external_reference_id, le.external_reference_id), null, m.state, m.order_state,
             format('The API says %s (since %s) but the latest webhook (event_time %s) says %s.',
                    m.state, to_char(m.state_since at time zone 'UTC', ${ISO_FORMAT}), le.event_time, m.order_state),
             jsonb_build_object('api_state', m.state,
                                'api_state_since', to_char(m.state_since at time zone 'UTC', ${ISO_FORMAT}),
                                'webhook_state', m.order_state,
                                'webhook_event_key', m.event_key,
                                'webhook_event_time', le.event_time),
             md5(m.state || '|' || m.order_state || '|' || m.event_key)
      from m
      -- L's description (event_time, reference), by primary key for the few mismatches only. As a
      -- plain join the planner guessed 150,000 mismatches and hashed all of order_events (2 s at
      -- 1,000,000 orders); LIMIT keeps this LATERAL a lookup instead of being flattened into that.
      cross join lateral (
        select e.event_time, e.external_reference_id from order_events e
        where e.environment = ${p.environment} and e.event_key = m.event_key
        limit 1
      ) le`;
    return result.count;
  },
};
