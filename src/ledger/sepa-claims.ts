import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';

/**
 * Each payout's claim on the SEPA reference its events carry, with the payout that holds it
 * (`first_payout`): of the payouts carrying one reference, the one the provider announced first
 * (earliest event_time, then arrival, then uuid). Event times never change; arrival alone is no
 * evidence, as retries reorder deliveries. duplicate_event reports every other claimant; the bank
 * credit carrying the reference is the holder's (payout-credits.ts payoutCredits), so no view shows
 * it as the same money paid to two payouts.
 */
export function sepaClaims(sql: Sql | TransactionSql, environment: ProviderEnvironment) {
  return sql`
    select sepa_key, sepa_instruction_id, payout_uuid,
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
 * A SEPA reference as the rules compare it: upper-case, without the blanks around it; null when
 * blank. Banks match references without regard to case (the bank credit of "po…01" carries
 * "PO…01"), and a provider's payload may carry a blank around one: compared as sent, " PO…02"
 * matched no credit, and "PO…01" and "po…01" were two references one credit paid.
 */
export function sepaKey(sql: Sql | TransactionSql, column: PendingQuery<Row[]>) {
  return sql`nullif(upper(btrim(${column})), '')`;
}

/** The payouts that hold their SEPA reference (sepaClaims): `payout_uuid`, `sepa_instruction_id`, `sepa_key`. */
export function sepaHolders(sql: Sql | TransactionSql, environment: ProviderEnvironment) {
  return sql`select c.payout_uuid, c.sepa_instruction_id, c.sepa_key from (${sepaClaims(sql, environment)}) c where c.payout_uuid = c.first_payout`;
}
