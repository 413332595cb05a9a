import type { TransactionSql } from 'postgres';
import type { PayoutRuleSettings, RuleParams } from '../types.js';
import { creditLines } from '../../ledger/payout-credits.js';
import { DEFAULT_PAYOUT_SETTLEMENT_DAYS } from '../../config/schema.js';

export const DEFAULT_PAYOUT_SETTINGS: PayoutRuleSettings = { settlementDays: DEFAULT_PAYOUT_SETTLEMENT_DAYS, sourceIbans: [], referencePattern: null };

export function payoutSettings(p: RuleParams): PayoutRuleSettings {
  const s = p.payout ?? DEFAULT_PAYOUT_SETTINGS;
  const norm = (iban: string) => iban.replace(/\s+/g, '').toUpperCase();
  return { ...s, sourceIbans: s.sourceIbans.map(norm), accountIbans: (s.accountIbans ?? []).map(norm) };
}

/**
 * Each payout as its latest event says (the same choice as `report payouts`): ordered by the
 * event's own time (event_time_sortable, nine fractional digits, text order = time order), then
 * arrival, then event_key, so a payout/cancelled that follows a payout/complete wins whatever order
 * they arrived in. `anchor` is when the provider says it happened (event_time), or our receipt
 * time when the payload had none. `sepa_key` is null for a blank reference: it names no credit.
 *
 * The payout rules ignore an incremental pass's order scope: payouts are few (one a day per
 * environment), and looking at all of them keeps `found` complete for every payout kind, which is
 * what lets the pass resolve the ones whose evidence went away.
 */
export function latestPayouts(tx: TransactionSql, p: RuleParams) {
  return tx`
    select distinct on (payout_uuid)
           payout_uuid, status, sepa_instruction_id, nullif(upper(btrim(sepa_instruction_id)), '') as sepa_key, amount_cents, event_time, external_reference_ids,
           coalesce(event_time_sortable::timestamptz, received_at) as anchor
    from payout_events
    where environment = ${p.environment}
    order by payout_uuid, event_time_sortable desc nulls last, received_at desc, event_key desc`;
}

/**
 * Bank credits per payout reference (payout-credits.ts: the reference wherever it stands in the
 * line). `lines` names the bank's entry reference (or our line id) and booking date of each, for people;
 * `currency` the credits' (the reports' money at stake).
 */
export function creditsByReference(tx: TransactionSql, p: RuleParams) {
  return tx`
    select payout_reference as sepa_reference, sum(amount_cents) as credited, count(*) as n, min(currency) as currency,
           string_agg(coalesce(bank_reference, '#' || id::text) || ' (' || booking_date::text || ')', ', '
                      order by booking_date, id) as lines
    from (${creditLines(tx, p.environment)}) c
    where payout_reference is not null
    group by payout_reference`;
}
