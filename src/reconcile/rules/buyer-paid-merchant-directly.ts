import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { creditLines } from '../../ledger/payout-credits.js';
import { payoutSettings } from './payout-common.js';

/**
 * buyer_paid_merchant_directly: a buyer paid an invoice to the merchant's account instead of the
 * provider's. The merchant must tell the provider, which then deducts it from a later payout
 * (provider-merchant-docs.md, "Invoices").
 *
 * Evidence: a credit line of the environment's statements that is no payout credit (it carries no
 * payout's SEPA reference, does not come from PAYOUT_SOURCE_IBANS and does not match
 * PAYOUT_REFERENCE_PATTERN: payout-credits.ts) and names a known invoice reference R (an invoice
 * event's external_reference_id) as its reference or as a word of its remittance text (compared
 * upper-case; words split at anything but letters, digits and - _ / ., a trailing . or - dropped,
 * so "INV-000123." names INV-000123 and "INV-0001234" does not); and no report row of a payout
 * whose latest event is payout/complete deducts R as a buyer payment (doc type buyer payment, Doc
 * No R): a cancelled payout deducted nothing.
 *
 * Near misses: a payout credit whose text lists invoices; a debit naming an invoice (a refund); a
 * credit naming no known invoice, or a reference only inside a longer word; a buyer payment a
 * payout report already deducted.
 *
 * Entity the statement line as statement_credit_without_payout names it (the bank's entry
 * reference, '#<line id>' without one, '<reference>#<line id>' when two flagged lines share one);
 * subject R; observed = the credited cents. Resolves when a completed payout's report deducts R as
 * a buyer payment, or by acknowledgement.
 */
export const buyerPaidMerchantDirectly: Rule = {
  kind: 'buyer_paid_merchant_directly',
  entities: ['statement_line'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const { sourceIbans, referencePattern } = payoutSettings(p);
    const result = await tx`
      with candidates as (
        select s.*, w.word
        from (${creditLines(tx, p.environment, referencePattern)}) s
        cross join lateral (
          select upper(s.sepa_reference) as word
          union
          select regexp_replace(t, '[.-]+$', '')
          from regexp_split_to_table(upper(coalesce(s.remittance, '')), '[^A-Z0-9_/.-]+') as t
        ) w
        where not s.carries_payout and not s.matches_pattern
          and not coalesce(s.counterparty_iban = any(${sourceIbans as string[]}::text[]), false)
      ),
      -- The invoice references the candidate lines name, found in one pass over the invoices
      -- against the set of the lines' words; and the buyer payments the payout reports deducted
      -- (few rows). Joined line by line instead, the planner (estimating one candidate line)
      -- rebuilt the set of all invoice references for each line: quadratic (100,000 orders with 10
      -- such lines: 10 x ~170 ms; bench/README.md, reconcile).
      words as materialized (select distinct word from candidates where word <> ''),
      invoice_refs as materialized (
        select distinct upper(external_reference_id) as ref from invoice_events
        where environment = ${p.environment} and external_reference_id is not null
          and upper(external_reference_id) in (select word from words)
      ),
      -- Deducted by a payout that was paid: a cancelled payout's report deducted nothing.
      deducted as materialized (
        select distinct upper(w.doc_no) as ref from payout_report_rows w
        join pass_payouts l on l.payout_uuid = w.payout_uuid and l.status = 'complete'
        where w.environment = ${p.environment} and w.doc_type = 'buyer_payment'
      ),
      named as (
        select distinct c.id, c.line_key, c.bank_reference, c.booking_date, c.amount_cents, c.counterparty_name, c.counterparty_iban, r.ref
        from candidates c join invoice_refs r on r.ref = c.word
        where not exists (select 1 from deducted b where b.ref = r.ref)
      ),
      flagged as (select n.*, count(*) over (partition by n.bank_reference) as same_ref from named n)
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'buyer_paid_merchant_directly', 'statement_line',
             case when f.bank_reference is null then '#' || f.id::text
                  when f.same_ref > count(*) over (partition by f.id) then f.bank_reference || '#' || f.id::text
                  else f.bank_reference end,
             f.ref, f.ref, null, null, f.amount_cents::text,
             format('Bank credit %s booked %s: %s cents from %s (%s) names invoice %s: the buyer paid the merchant directly; tell the provider, which deducts it from a later payout.',
                    coalesce(f.bank_reference, '#' || f.id::text), f.booking_date::text, f.amount_cents,
                    coalesce(f.counterparty_name, '?'), coalesce(f.counterparty_iban, '?'), f.ref),
             jsonb_build_object('statement_line_id', f.id, 'bank_reference', f.bank_reference, 'booking_date', f.booking_date::text,
                                'amount_cents', f.amount_cents::text, 'invoice_reference', f.ref),
             md5(f.line_key || '|' || f.ref)
      from flagged f`;
    return result.count;
  },
};
