import type { TransactionSql } from 'postgres';
import { ISO_FORMAT } from '../found.js';
import { ORDER_STATES_WITH_TOPIC, type Rule, type RuleParams } from '../types.js';

/**
 * missed_webhook: the API showed an order in a state that has a webhook topic, and no webhook for
 * that state arrived within the grace period.
 *
 * Evidence, all of it required:
 *  - the poller saw order O in state S: S is O's current `order_snapshots.state`, or a row of
 *    `order_state_observations` (a state the poller saw before the order moved on; a webhook lost
 *    for it is still lost). States the poller never saw are never candidates: we cannot tell an
 *    intermediate state that was skipped from one whose webhook was lost.
 *  - S has a topic (authorized, pending, confirmed, declined, canceled). shipped, complete and any
 *    other state the provider has no order/<S> topic for can never have a webhook.
 *  - the poller first saw S at `since` (min of snapshot.state_since and the observations of S), and
 *    since <= now - WEBHOOK_GRACE_SECONDS. The grace period (default 1 h) is longer than the spec's
 *    whole retry window (5 retries, exponential backoff, ~31 min): before it ends the provider may
 *    still deliver, and a late delivery is not a problem.
 *  - no `order_events` row of O carries order_state = S (whatever its event_time or arrival).
 *
 * Resolves when the order/<S> webhook arrives (the row appears). Subject = S, so a lost confirmed
 * webhook and a lost canceled one of the same order are two findings. The evidence hash covers S and
 * `since`: an acknowledged finding reopens only if the poller saw S anew (A -> B -> A).
 *
 * Cost: one pass over the topic-bearing snapshots and observations with an anti-join on
 * order_events_state_idx (environment, order_uuid, order_state).
 */
export const missedWebhook: Rule = {
  name: 'missed_webhook',
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      insert into found
      select ${p.environment}::provider_environment, 'missed_webhook', 'order', seen.order_uuid::text, seen.state,
             s.external_reference_id, null, seen.state, null,
             format('The API has shown order state %s since %s but no order/%s webhook arrived within %s s.',
                    seen.state, to_char(seen.since at time zone 'UTC', ${ISO_FORMAT}), seen.state, ${p.graceSeconds}::int),
             jsonb_build_object('state', seen.state,
                                'seen_since', to_char(seen.since at time zone 'UTC', ${ISO_FORMAT}),
                                'api_state', s.state,
                                'grace_seconds', ${p.graceSeconds}::int),
             md5(seen.state || '|' || to_char(seen.since at time zone 'UTC', ${ISO_FORMAT}))
      from (
        select u.order_uuid, u.state, min(u.since) as since
        from (
          select order_uuid, state, state_since as since
          from order_snapshots
          where environment = ${p.environment} and state in ${tx(ORDER_STATES_WITH_TOPIC)}
          union all
          select order_uuid, state, observed_at
          from order_state_observations
          where environment = ${p.environment} and state in ${tx(ORDER_STATES_WITH_TOPIC)}
        ) u
        group by u.order_uuid, u.state
      ) seen
      left join order_snapshots s on s.environment = ${p.environment} and s.order_uuid = seen.order_uuid
      where seen.since <= ${p.now.toISOString()}::timestamptz - make_interval(secs => ${p.graceSeconds})
        and not exists (
          select 1 from order_events e
          where e.environment = ${p.environment} and e.order_uuid = seen.order_uuid and e.order_state = seen.state)`;
    return result.count;
  },
};
