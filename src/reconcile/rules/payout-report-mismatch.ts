import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';

/**
 * payout_report_mismatch: the provider's payout report and its payout event disagree.
 *
 * Evidence: a payout with stored payout report rows (payout_report_rows, tied to it at import)
 * whose latest event (payout-common.ts, staged once per pass: invoice-common.ts) says amount A and lists the invoice references L (trimmed,
 * blanks ignored), where the rows' Transfer Amounts do not sum to A (A null counts as a
 * mismatch), the rows name more than one currency (a payout is paid in one: provider-merchant-docs.md,
 * "Amounts are in the payout's currency"; never added across currencies, and the import refuses
 * such a file: payout-import/import.ts), or the set of Doc Nos of its invoice rows is not L.
 *
 * Near misses: a payout with no report imported (nothing to compare); report rows of credit notes,
 * buyer payments and disputes, which reduce the sum but are not listed invoices; the same invoice
 * set in another order.
 *
 * Entity the payout, subject ''; expected = A, observed = the rows' sum (cents; rows in several
 * currencies: each currency's sum, `9667 EUR + 9667 GBP`); the details name
 * the invoices missing from the report and those the payout does not list. Resolves when a report
 * that adds up is imported for it instead (rows are never replaced, so in practice by
 * acknowledgement) or the payout event changes.
 */
export const payoutReportMismatch: Rule = {
  kind: 'payout_report_mismatch',
  entities: ['payout'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      with reported as (
        select payout_uuid, sum(transfer_amount_cents) as transfer, count(distinct upper(currency)) > 1 as mixed, min(upper(currency)) as currency,
               coalesce(array_agg(distinct doc_no order by doc_no) filter (where doc_type = 'invoice'), '{}') as invoices
        from payout_report_rows
        where environment = ${p.environment}
        group by payout_uuid
      ),
      -- Rows of one payout in two currencies (stored before the import refused such files) are not
      -- added: their sum is no amount (EUR 100.00 + GBP 100.00 "matched" a payout of 200.00). A
      -- payout is paid in one currency, so such a report is not the payout's: flagged, observed
      -- being each currency's sum. Rows of unstated currency count with the stated one.
      compared as (
        select l.payout_uuid, l.sepa_instruction_id, l.amount_cents, r.invoices, r.mixed, case when not r.mixed then r.currency end as currency,
               case when not r.mixed then r.transfer end as transfer,
               case when not r.mixed then r.transfer::text
                    else (select string_agg(x.cents::text || ' ' || coalesce(x.currency, '(no currency)'), ' + ' order by x.currency nulls first)
                          from (select upper(w.currency) as currency, sum(w.transfer_amount_cents) as cents
                                from payout_report_rows w
                                where w.environment = ${p.environment} and w.payout_uuid = r.payout_uuid
                                group by upper(w.currency)) x) end as observed,
               array(select distinct trim(x) from unnest(l.external_reference_ids) x where trim(x) <> '' order by 1) as listed
        from pass_payouts l
        join reported r on r.payout_uuid = l.payout_uuid
      ),
      -- Both lists are sorted and distinct, so equal arrays mean equal sets: the differences are
      -- spelled out only for the payouts that disagree (20,000 payouts: 2.4 s for all, most of it
      -- in the two set differences per payout).
      judged as (
        select c.*,
               array(select x from unnest(c.listed) x except select y from unnest(c.invoices) y order by 1) as missing,
               array(select y from unnest(c.invoices) y except select x from unnest(c.listed) x order by 1) as extra
        from compared c
        where c.mixed or c.amount_cents is distinct from c.transfer or c.listed is distinct from c.invoices
      )
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'payout_report_mismatch', 'payout', j.payout_uuid::text, '',
             null, j.sepa_instruction_id, j.amount_cents::text, j.observed,
             format('Payout %s (SEPA reference %s) is %s cents; its report''s rows transfer %s%s%s.',
                    j.payout_uuid, coalesce(j.sepa_instruction_id, '(none)'), coalesce(j.amount_cents::text, '(no amount)'),
                    case when j.mixed then j.observed || ', in more than one currency (a payout is paid in one: not added)' else j.observed || ' cents' end,
                    case when cardinality(j.missing) > 0 then '; invoices the payout lists and the report does not: ' || array_to_string(j.missing, ', ') else '' end,
                    case when cardinality(j.extra) > 0 then '; invoices the report pays and the payout does not list: ' || array_to_string(j.extra, ', ') else '' end),
             jsonb_build_object('sepa_reference', j.sepa_instruction_id, 'payout_cents', j.amount_cents::text, 'report_cents', j.observed,
                                'missing_from_report', to_jsonb(j.missing), 'not_listed_by_payout', to_jsonb(j.extra),
                                -- the rows' currency, for people (none when they name two: then no sum is shown)
                                'currency', j.currency),
             md5(coalesce(j.amount_cents::text, '') || '|' || j.observed || '|' || array_to_string(j.missing, ',') || '|' || array_to_string(j.extra, ','))
      from judged j
      where j.mixed or j.amount_cents is distinct from j.transfer or cardinality(j.missing) > 0 or cardinality(j.extra) > 0`;
    return result.count;
  },
};
