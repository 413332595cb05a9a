import type { TransactionSql } from 'postgres';
import type { InvoiceRuleSettings, RuleParams } from '../types.js';
import { latestPayouts } from './payout-common.js';

/** INVOICE_PAYOUT_DAYS' default (config/schema.ts says why); no contract terms: deductions not judged. */
export const DEFAULT_INVOICE_SETTINGS: InvoiceRuleSettings = { payoutDays: 7, terms: null };

export function invoiceSettings(p: RuleParams): InvoiceRuleSettings {
  return p.invoice ?? DEFAULT_INVOICE_SETTINGS;
}

/**
 * Each invoice the ledger has an invoice event of, by invoice uuid, with its reference (the
 * merchant's external_reference_id, which payouts list), its order, when it was created and when
 * canceled (the events' own time, else arrival). Like the payout rules, the invoice rules look at
 * every invoice in each pass (no incremental scope): their evidence changes with time (a deadline
 * days after factoring) and with payouts, which name invoices, not orders.
 */
export function invoiceFacts(tx: TransactionSql, p: RuleParams) {
  return tx`
    select i.invoice_uuid,
           (array_agg(i.external_reference_id order by i.received_at) filter (where i.external_reference_id is not null))[1] as ref,
           (array_agg(i.order_uuid order by i.received_at) filter (where i.order_uuid is not null))[1] as order_uuid,
           coalesce(min(coalesce(i.event_time_sortable::timestamptz, i.received_at)) filter (where i.topic = 'invoice/created'),
                    min(coalesce(i.event_time_sortable::timestamptz, i.received_at))) as created_at,
           min(coalesce(i.event_time_sortable::timestamptz, i.received_at)) filter (where i.topic = 'invoice/canceled') as canceled_at
    from invoice_events i
    where i.environment = ${p.environment}
    group by i.invoice_uuid
    having count(i.external_reference_id) > 0`;
}

/**
 * Every invoice reference each payout lists (trimmed; blanks ignored), with the payout's latest
 * status, SEPA reference and anchor (payout-common.ts latestPayouts).
 */
export function payoutListings(tx: TransactionSql, p: RuleParams) {
  return tx`
    select distinct l.payout_uuid, l.status, l.sepa_instruction_id, l.sepa_key, l.amount_cents, l.anchor, trim(r.ref) as ref
    from (${latestPayouts(tx, p)}) l
    cross join lateral unnest(l.external_reference_ids) as r(ref)
    where trim(r.ref) <> ''`;
}
