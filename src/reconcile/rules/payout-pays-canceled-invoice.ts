import type { TransactionSql } from 'postgres';
import { ISO_FORMAT, insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { invoiceFacts, payoutListings } from './invoice-common.js';
import { topic } from '../../provider/vocabulary.js';

/**
 * payout_pays_canceled_invoice: a payout paid the merchant for an invoice the provider does not owe.
 *
 * Evidence: a payout whose latest event is payout/complete, anchored at A (its event_time, else
 * arrival), lists reference R of an invoice that, before A, was canceled (an invoice/canceled
 * event whose event_time, else arrival, is earlier than A), or whose latest factoring event
 * received before A is factoring/declined.
 *
 * Near misses: a cancellation or a decline after the payout (the payout was right when made; what
 * happens to the money then is a credit note's business); a declined factoring later approved
 * before the payout; a cancelled payout listing a canceled invoice (paid nothing).
 *
 * Entity the invoice (uuid), subject the payout's uuid (one finding per payout listing it);
 * expected = 'canceled' or 'declined', observed = 'paid out'. Resolves when the payout is cancelled.
 */
export const payoutPaysCanceledInvoice: Rule = {
  kind: 'payout_pays_canceled_invoice',
  entities: ['invoice'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      with judged as (
        select i.invoice_uuid, i.ref, l.payout_uuid, l.sepa_instruction_id, l.anchor, i.canceled_at,
               case when i.canceled_at < l.anchor then 'canceled'
                    when f.topic = ${topic('factoring/declined')} then 'declined' end as why
        from (${payoutListings(tx, p)}) l
        join (${invoiceFacts(tx, p)}) i on i.ref = l.ref
        left join lateral (
          select e.topic from factoring_events e
          where e.environment = ${p.environment} and e.invoice_external_reference_id = i.ref and e.received_at < l.anchor
          order by e.received_at desc, e.event_key desc limit 1
        ) f on true
        where l.status = 'complete'
      )
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'payout_pays_canceled_invoice', 'invoice', j.invoice_uuid::text, j.payout_uuid::text,
             j.ref, j.sepa_instruction_id, j.why, 'paid out',
             format('Payout %s (SEPA reference %s) of %s pays invoice %s, %s before it.',
                    j.payout_uuid, coalesce(j.sepa_instruction_id, '(none)'), to_char(j.anchor at time zone 'UTC', ${ISO_FORMAT}), j.ref,
                    case when j.why = 'canceled' then 'canceled at ' || to_char(j.canceled_at at time zone 'UTC', ${ISO_FORMAT})
                         else 'whose factoring was declined' end),
             jsonb_build_object('invoice_reference', j.ref, 'payout_uuid', j.payout_uuid, 'why', j.why,
                                'payout_at', to_char(j.anchor at time zone 'UTC', ${ISO_FORMAT})),
             md5(j.ref || '|' || j.payout_uuid::text || '|' || j.why)
      from judged j
      where j.why is not null`;
    return result.count;
  },
};
