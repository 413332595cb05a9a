import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';

/**
 * invoice_paid_out_twice: the provider paid the merchant twice for one invoice.
 *
 * Evidence (staged once per pass: invoice-common.ts): an invoice (invoice event with reference R) listed by two or more payouts whose latest
 * event is payout/complete and that are distinct transfers: distinct SEPA references (compared
 * upper-case; a payout without one counts as its own transfer). No wait: both payouts are final.
 *
 * Near misses: a cancelled payout and the completed one that replaced it (paid once); two payout
 * uuids with one SEPA reference (one transfer announced twice: duplicate_event); two events of one
 * payout; a reference no invoice event has (payout_unknown_invoice).
 *
 * Entity the invoice (uuid), subject ''; expected = '1' payout, observed = the count; the evidence
 * names the payouts. Resolves when one of the payouts is cancelled.
 */
export const invoicePaidOutTwice: Rule = {
  kind: 'invoice_paid_out_twice',
  entities: ['invoice'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      with listed_twice as materialized (
        -- two distinct transfers need two listings: the aggregate below runs for these few only
        select ref from pass_listings where status = 'complete' group by ref having count(*) > 1
      ),
      paid as (
        select l.ref, count(distinct coalesce(l.sepa_key, l.payout_uuid::text)) as transfers,
               string_agg(l.payout_uuid::text || ' (' || coalesce(l.sepa_instruction_id, 'no SEPA reference') || ')', ', '
                          order by l.anchor, l.payout_uuid) as payouts
        from pass_listings l
        where l.status = 'complete' and l.ref in (select ref from listed_twice)
        group by l.ref
      )
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'invoice_paid_out_twice', 'invoice', i.invoice_uuid::text, '',
             i.ref, null, '1', d.transfers::text,
             format('Invoice %s is listed by %s completed payouts with different SEPA references: %s.', i.ref, d.transfers, d.payouts),
             jsonb_build_object('invoice_reference', i.ref, 'payouts', d.payouts),
             md5(i.ref || '|' || d.payouts)
      from pass_invoices i
      join paid d on d.ref = i.ref
      where d.transfers > 1`;
    return result.count;
  },
};
