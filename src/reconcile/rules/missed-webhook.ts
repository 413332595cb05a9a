import type { TransactionSql } from 'postgres';
import { ISO_FORMAT, insertIntoFound } from '../found.js';
import { inScope } from '../scope.js';
import { stage } from '../stage.js';
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
 * the start of the latest sighting of S past the grace period (each observation of S starts one):
 * an acknowledged finding reopens only when the poller saw S anew (A -> B -> A) and that sighting
 * too went a grace period without its webhook. The snapshot's state_since counts only for an order
 * with no observation of S (one first seen before observations were kept): within one poll run a
 * change back (A, B, A) keeps the first observation (poller/upsert.ts) while the snapshot's
 * state_since moves to the second reading, so the hash changed back once the order moved on, and
 * reopened an acknowledged finding on no new evidence.
 *
 * Cost: one pass over the topic-bearing snapshots and observations with one (parallel) hash
 * anti-join against order_events; staged (stage.ts), then described.
 */
export const missedWebhook: Rule = {
  kind: 'missed_webhook',
  entities: ['order'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const cutoff = tx`${p.now.toISOString()}::timestamptz - make_interval(secs => ${p.graceSeconds})`;
    // Seen states without a webhook. One anti-join of the seen (order, state) pairs with
    // order_events (one hash of the events, not one per source of seen states), before the
    // grouping: almost every seen state has its webhook, so only the few that lack one are grouped
    // (at 1,000,000 orders: group 2,000,000 rows vs ~1,000). min(since) over the rows past the
    // cutoff equals min over all rows whenever any is past it.
    await stage(tx, 'missed_seen', tx`
      select u.order_uuid, u.state, min(u.since) as since,
             coalesce(max(u.since) filter (where u.observed), max(u.since)) as latest
      from (
        select s.order_uuid, s.state, s.state_since as since, false as observed
        from order_snapshots s
        where s.environment = ${p.environment} and s.state in ${tx(ORDER_STATES_WITH_TOPIC)} and s.state_since <= ${cutoff}
          ${inScope(tx, p, 's')}
        union all
        select o.order_uuid, o.state, o.observed_at, true
        from order_state_observations o
        where o.environment = ${p.environment} and o.state in ${tx(ORDER_STATES_WITH_TOPIC)} and o.observed_at <= ${cutoff}
          ${inScope(tx, p, 'o')}
      ) u
      where not exists (
        select 1 from order_events e
        where e.environment = ${p.environment} and e.order_uuid = u.order_uuid and e.order_state = u.state)
      group by u.order_uuid, u.state`);
    const result = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'missed_webhook', 'order', seen.order_uuid::text, seen.state,
             s.external_reference_id, null, seen.state, null,
             format('The API has shown order state %s since %s but no order/%s webhook arrived within %s s.',
                    seen.state, to_char(seen.since at time zone 'UTC', ${ISO_FORMAT}), seen.state, ${p.graceSeconds}::int),
             jsonb_build_object('state', seen.state,
                                'seen_since', to_char(seen.since at time zone 'UTC', ${ISO_FORMAT}),
                                'seen_latest', to_char(seen.latest at time zone 'UTC', ${ISO_FORMAT}),
                                'api_state', s.state,
                                'grace_seconds', ${p.graceSeconds}::int),
             md5(seen.state || '|' || to_char(seen.latest at time zone 'UTC', ${ISO_FORMAT}))
      from pg_temp.missed_seen seen
      left join order_snapshots s on s.environment = ${p.environment} and s.order_uuid = seen.order_uuid`;
    return result.count;
  },
};
