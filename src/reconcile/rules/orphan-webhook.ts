import type { TransactionSql } from 'postgres';
import { ISO_FORMAT, insertIntoFound } from '../found.js';
import { inScope } from '../scope.js';
import { stage } from '../stage.js';
import type { Rule, RuleParams } from '../types.js';

/**
 * orphan_webhook: a verified order webhook names an order the API does not know.
 *
 * Absence can only be proven by a poll that listed everything: a poll_runs row with
 * status = 'complete' (failed or aborted runs prove nothing). Let R be the environment's most recent
 * complete run (greatest started_at). Order O is an orphan iff:
 *  - O has at least one row in order_events (rows there exist only for deliveries whose signature
 *    verified, see the receiver); let F = the earliest received_at among them;
 *  - R.started_at > F + WEBHOOK_GRACE_SECONDS: the run began long after we learnt of the order, so an
 *    order created while a scan was under way (listed on a page the scan had already passed) is
 *    never an orphan; it had a whole grace period to appear in some run before R;
 *  - R did not list O: no snapshot of O, or its last_seen_run_id < R.id (the poller stamps every
 *    order a run lists with that run's id, and run ids grow with start time).
 *
 * Resolves when a later run lists O (last_seen_run_id >= that run's id), complete or not: a listing
 * proves the order exists, where only absence needs a complete run (scope.ts clause 6). Subject ''. The
 * evidence hash covers F only, not R: each new run re-proves the same absence and must not reopen an
 * acknowledged orphan.
 *
 * Cost: an anti-join of order_events against the orders R listed (parallel hash anti-join, staged:
 * stage.ts), then a small group over the survivors.
 */
export const orphanWebhook: Rule = {
  kind: 'orphan_webhook',
  entities: ['order'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    // R is read first and passed as constants: joined as a CTE it turned the anti-join into a
    // serial nested loop over all of order_events (1.9 s at 1,000,000 orders, 0.8 s in parallel).
    const [run] = await tx<{ id: string; started_at: string }[]>`
      select id::text as id, to_char(started_at at time zone 'UTC', ${ISO_FORMAT}) as started_at from poll_runs
      where environment = ${p.environment} and status = 'complete'
      order by started_at desc, id desc
      limit 1`;
    if (!run) return 0;
    await stage(tx, 'orphan_unlisted', tx`
      select e.order_uuid, min(e.received_at) as first_received_at, max(e.external_reference_id) as external_reference_id,
             ${run.id}::bigint as run_id, ${run.started_at}::timestamptz as run_started_at
      from order_events e
      where e.environment = ${p.environment}
        ${inScope(tx, p, 'e')}
        and not exists (
          select 1 from order_snapshots s
          where s.environment = ${p.environment} and s.order_uuid = e.order_uuid and s.last_seen_run_id >= ${run.id}::bigint)
      group by e.order_uuid
      having min(e.received_at) + make_interval(secs => ${p.graceSeconds}) < ${run.started_at}::timestamptz`);
    const result = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'orphan_webhook', 'order', u.order_uuid::text, '',
             u.external_reference_id, null, 'listed', 'absent',
             format('Webhooks for order %s arrived from %s, but complete poll run %s (started %s) did not list it.',
                    u.order_uuid, to_char(u.first_received_at at time zone 'UTC', ${ISO_FORMAT}), u.run_id,
                    to_char(u.run_started_at at time zone 'UTC', ${ISO_FORMAT})),
             jsonb_build_object('first_received_at', to_char(u.first_received_at at time zone 'UTC', ${ISO_FORMAT}),
                                'poll_run_id', u.run_id,
                                'poll_run_started_at', to_char(u.run_started_at at time zone 'UTC', ${ISO_FORMAT}),
                                'last_seen_run_id', s.last_seen_run_id),
             md5(u.order_uuid::text || '|' || to_char(u.first_received_at at time zone 'UTC', ${ISO_FORMAT}))
      from pg_temp.orphan_unlisted u
      left join order_snapshots s on s.environment = ${p.environment} and s.order_uuid = u.order_uuid`;
    return result.count;
  },
};
