import type { TransactionSql } from 'postgres';
import { ISO_FORMAT, insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { factoredWithoutInvoiceEvent, invoiceSettings } from './invoice-common.js';
import { topic } from '../../provider/vocabulary.js';

/**
 * invoice_not_paid_out: an invoice the provider owes the merchant for, which no completed payout
 * lists in time.
 *
 * Evidence (staged once per pass: invoice-common.ts), all of it required, with D =
 * INVOICE_PAYOUT_DAYS (default 7):
 *  - an invoice event of the invoice with its reference R, or a factoring/approved naming R when
 *    no invoice event carries it (invoice-common.ts factoredWithoutInvoiceEvent: its invoice/created
 *    was lost; entity the uuid the approval names, else R);
 *  - it is owed: when the environment's ledger has factoring events at all, the latest factoring
 *    event for R (by arrival: factoring payloads carry no event_time) is factoring/approved and
 *    its arrival is the start S; when it has none (the merchant does not subscribe to factoring),
 *    S is the invoice's creation (invoice/created's event_time). An invoice whose factoring is
 *    pending or declined, or has no factoring event while others do, is not owed yet: no finding;
 *  - no invoice/canceled event of the invoice (a canceled invoice is not paid out);
 *  - S + D days <= the pass's clock;
 *  - no payout whose latest event is payout/complete lists R (a cancelled payout paid nothing).
 *
 * Near misses: a payout listing R within the deadline, or after it (resolves); a cancelled payout
 * listing R (still flagged); an invoice still inside its deadline; a canceled invoice; factoring
 * declined or pending.
 *
 * Entity the invoice (uuid), subject ''; expected = the factored amount in cents where known;
 * observed = 'not paid out'. Resolves when a completed payout lists R or the invoice is canceled.
 */
export const invoiceNotPaidOut: Rule = {
  kind: 'invoice_not_paid_out',
  entities: ['invoice'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const { payoutDays } = invoiceSettings(p);
    const result = await tx`
      with any_factoring as (select exists (select 1 from factoring_events where environment = ${p.environment}) as yes),
      owed as (
        select i.invoice_uuid, i.ref, f.invoice_amount_cents,
               case when (select yes from any_factoring) then f.received_at else i.created_at end as since
        from pass_invoices i
        left join pass_factoring f on f.ref = i.ref
        where i.canceled_at is null
          and (not (select yes from any_factoring) or f.topic = ${topic('factoring/approved')})
        union all
        select x.invoice_uuid, x.ref, x.invoice_amount_cents, x.received_at
        from (${factoredWithoutInvoiceEvent(tx, p.environment)}) x
      )
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'invoice_not_paid_out', 'invoice', coalesce(o.invoice_uuid::text, o.ref), '',
             o.ref, null, o.invoice_amount_cents::text, 'not paid out',
             format('Invoice %s (%s cents) is owed since %s, and no completed payout lists it %s days later.',
                    o.ref, coalesce(o.invoice_amount_cents::text, '?'), to_char(o.since at time zone 'UTC', ${ISO_FORMAT}), ${payoutDays}::int),
             jsonb_build_object('invoice_reference', o.ref, 'owed_since', to_char(o.since at time zone 'UTC', ${ISO_FORMAT}),
                                'amount_cents', o.invoice_amount_cents::text, 'payout_days', ${payoutDays}::int),
             md5(o.ref || '|' || coalesce(o.invoice_amount_cents::text, ''))
      from owed o
      where o.since + make_interval(days => ${payoutDays}) <= ${p.now.toISOString()}::timestamptz
        and not exists (select 1 from pass_listings l where l.status = 'complete' and l.ref = o.ref)`;
    return result.count;
  },
};
