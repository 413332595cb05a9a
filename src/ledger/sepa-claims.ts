import type { Sql, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { latestPayoutEvents } from './payouts.js';
import { sepaKey } from './sepa-key.js';

/**
 * Each payout's claim on the SEPA reference its events carry, with the payout that announced it
 * first (`first_payout`: earliest event_time, then arrival, then uuid). Event times never change;
 * arrival alone is no evidence, as retries reorder deliveries. duplicate_event reports every other
 * claimant.
 */
export function sepaClaims(sql: Sql | TransactionSql, environment: ProviderEnvironment) {
  return sql`
    select sepa_key, sepa_instruction_id, payout_uuid, first_event_time, first_received,
           first_value(payout_uuid) over (partition by sepa_key order by first_event_time, first_received, payout_uuid) as first_payout
    from (
      select ${sepaKey(sql, sql`sepa_instruction_id`)} as sepa_key, min(sepa_instruction_id) as sepa_instruction_id, payout_uuid,
             min(event_time_sortable) as first_event_time, min(received_at) as first_received
      from payout_events
      where environment = ${environment} and btrim(sepa_instruction_id) <> ''
      group by 1, payout_uuid
    ) claims`;
}

/**
 * The payout that holds each SEPA reference, so that no view shows a bank credit carrying it as the
 * same money paid to two payouts (payout-credits.ts payoutCredits): of its claimants (sepaClaims), a
 * payout whose latest event is payout/complete before one cancelled, then the one announced first.
 * The payout rules judge the credit the same way: a cancelled payout sharing its reference with a
 * completed one is no payout_cancelled_but_credited, the credit being the completed one's.
 * Columns `payout_uuid`, `sepa_instruction_id`, `sepa_key`.
 */
export function sepaHolders(sql: Sql | TransactionSql, environment: ProviderEnvironment) {
  return sql`
    select distinct on (c.sepa_key) c.payout_uuid, c.sepa_instruction_id, c.sepa_key
    from (${sepaClaims(sql, environment)}) c
    join (${latestPayoutEvents(sql, environment)}) l on l.payout_uuid = c.payout_uuid
    order by c.sepa_key, l.status = 'complete' desc, c.first_event_time, c.first_received, c.payout_uuid`;
}
