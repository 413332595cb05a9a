import type { Sql, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { sepaKey } from './sepa-key.js';

/**
 * Each payout as its latest event says, the one choice every view and rule makes: ordered by the
 * event's own time (event_time_sortable, nine fractional digits, text order = time order), then
 * arrival, then event_key, so a payout/cancelled that follows a payout/complete wins whatever order
 * they arrived in (retries reorder deliveries).
 *
 * Columns: payout_uuid, status, amount_cents, event_time, external_reference_ids, received_at;
 * `sepa_instruction_id` as the latest event wrote it; `sepa_key` the latest reference any of its
 * events named (sepaKey; null when none named one: it names no credit), and `sepa_reference` that
 * reference as the provider wrote it (without the blanks around it), for people. A payout/cancelled
 * that names no reference (a blank field) still concerns the transfer its payout/complete
 * referenced, and the credit carrying that reference is still this payout's. `anchor` is when the
 * provider says it happened (event_time), or our receipt time when the payload had none.
 *
 * `afterUuid` keeps payouts after that uuid (a report's page); the window partitions by payout, so
 * the filter changes no payout's row.
 */
export function latestPayoutEvents(sql: Sql | TransactionSql, environment: ProviderEnvironment, afterUuid?: string) {
  return sql`
    select distinct on (payout_uuid)
           payout_uuid, status, sepa_instruction_id,
           first_value(${sepaKey(sql, sql`sepa_instruction_id`)}) over latest_reference as sepa_key,
           first_value(nullif(btrim(sepa_instruction_id), '')) over latest_reference as sepa_reference,
           amount_cents, event_time, external_reference_ids, received_at,
           coalesce(event_time_sortable::timestamptz, received_at) as anchor
    from payout_events
    where environment = ${environment} and ${afterUuid === undefined ? sql`true` : sql`payout_uuid > ${afterUuid}::uuid`}
    window latest_reference as (
      partition by payout_uuid
      order by ${sepaKey(sql, sql`sepa_instruction_id`)} is null, event_time_sortable desc nulls last, received_at desc, event_key desc
    )
    order by payout_uuid, event_time_sortable desc nulls last, received_at desc, event_key desc`;
}
