import type { TransactionSql } from 'postgres';
import { ISO_FORMAT, insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { topic } from '../../provider/vocabulary.js';
import { decisionFirst } from '../../ledger/invoices.js';

/**
 * payout_pays_canceled_invoice: a payout paid the merchant for an invoice the provider does not owe.
 *
 * Evidence (staged once per pass: invoice-common.ts): a payout whose latest event is payout/complete, anchored at A (its event_time, else
 * arrival), lists reference R of an invoice that, before A, was canceled (an invoice/canceled
 * event whose event_time, else arrival, is earlier than A), or whose latest factoring decision
 * received before the payout/complete first arrived is factoring/declined (both arrivals: factoring
 * events carry no event_time), that decline received before A as well (one received between A and
 * a late delivery of the payout may have been made after the payout).
 *
 * Near misses: a cancellation or a decline after the payout (the payout was right when made; what
 * happens to the money then is a credit note's business); a declined factoring later approved
 * before the payout; a cancelled payout listing a canceled invoice (paid nothing); a second payout
 * uuid with the SEPA reference of an earlier completed one listing R (one transfer announced twice:
 * duplicate_event; the invoice was paid once, judged at the first announcement), as
 * invoice_paid_out_twice counts transfers.
 *
 * Entity the invoice (uuid), subject the payout's uuid (one finding per payout listing it);
 * expected = 'canceled' or 'declined', observed = 'paid out'. Resolves when the payout is cancelled.
 */
export const payoutPaysCanceledInvoice: Rule = {
  kind: 'payout_pays_canceled_invoice',
  entities: ['invoice'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      with declined_refs as materialized (
        -- only an invoice with a declined factoring event can have been declined before a payout
        select distinct invoice_external_reference_id as ref from factoring_events
        where environment = ${p.environment} and topic = ${topic('factoring/declined')} and invoice_external_reference_id is not null
      ),
      -- The few invoices that could qualify first, then their listings through pass_listings'
      -- index on ref: joined the other way round the planner hashed every listing twice, 2.0-2.4 s
      -- at 1,000,000 listings for a hundred canceled invoices. pass_invoices.ref is in the C
      -- collation (ledger/invoices.ts), which that index cannot serve: as it was, an ANALYZE sample
      -- that held no canceled invoice (estimating one) made the planner scan every listing for
      -- each of them, 13 s in one bench run. Two selects, not one with "or": the planner guessed
      -- half the invoices passed the "or".
      suspect as materialized (
        select invoice_uuid, ref collate "default" as ref, canceled_at from pass_invoices where canceled_at is not null
        union
        select invoice_uuid, ref collate "default" as ref, canceled_at from pass_invoices where ref in (select ref from declined_refs)
      ),
      paid as materialized (
        select i.invoice_uuid, i.ref, i.canceled_at, l.payout_uuid, l.sepa_instruction_id, l.anchor,
               (select min(pe.received_at) from payout_events pe
                where pe.environment = ${p.environment} and pe.payout_uuid = l.payout_uuid and pe.status = 'complete') as arrived
        from suspect i
        join pass_listings l on l.ref = i.ref
        where l.status = 'complete'
          and (i.canceled_at < l.anchor or l.ref in (select ref from declined_refs))
          and not exists (
            select 1 from pass_listings e
            where e.ref = l.ref and e.status = 'complete' and e.sepa_key = l.sepa_key
              and (e.anchor, e.payout_uuid) < (l.anchor, l.payout_uuid))
      ),
      -- each such listing's latest factoring decision received before its payout/complete first
      -- arrived, as one join: probed listing by listing it took 28 s for 1,000,000 listings
      -- (bench/README.md, reconcile). Both on our receipt clock: factoring payloads carry no
      -- event_time, and the payout's (the provider's clock) is earlier than its arrival by the
      -- delivery's transit and retries, so an approval received between the two was taken for one
      -- after the payout, and the invoice called declined. A decision outranks a pending that
      -- arrived after it (invoice-common.ts decisionFirst).
      factoring_before as (
        select distinct on (d.payout_uuid, d.ref) d.payout_uuid, d.ref, e.topic, e.received_at as decided_at
        from paid d
        join factoring_events e on e.environment = ${p.environment} and e.invoice_external_reference_id = d.ref and e.received_at < d.arrived
        order by d.payout_uuid, d.ref, ${decisionFirst(tx, 'e.topic')}, e.received_at desc, e.event_key desc
      ),
      judged as (
        select d.*, case when d.canceled_at < d.anchor then 'canceled'
                         -- ...and a decline received before the payout happened: one received
                         -- between the payout's event_time and its late delivery may have come after it.
                         when f.topic = ${topic('factoring/declined')} and f.decided_at < d.anchor then 'declined' end as why
        from paid d
        left join factoring_before f on f.payout_uuid = d.payout_uuid and f.ref = d.ref
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
