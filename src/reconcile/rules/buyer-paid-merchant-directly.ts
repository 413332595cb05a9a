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
 * so "INV-000123." names INV-000123 and "INV-0001234" does not); and the report rows of payouts
 * whose latest event is payout/complete (a cancelled payout deducted nothing) that deduct R as a
 * buyer payment (doc type buyer payment, Doc No R) do not cover it: their Transaction Amounts sum
 * to D (0 without any), and D is 0 or less than the sum of this credit and the earlier ones (by
 * booking date, then line) naming R alone. A credit naming several invoices adds nothing to that
 * sum (its share of each is unknown) and is covered once D is above 0.
 *
 * Near misses: a payout credit whose text lists invoices; a debit naming an invoice (a refund); a
 * credit naming no known invoice, or a reference only inside a longer word; a buyer payment a
 * payout report already deducted (the earlier of two direct payments of an invoice when only it
 * was deducted).
 *
 * Entity the statement line as statement_credit_without_payout names it (the bank's entry
 * reference, '#<line id>' without one; of credit lines sharing a reference, each after the first
 * stored '<reference>#<line id>', ranked among every credit line so that a line stored later, or
 * another line flagged or covered, never renames a finding and loses its acknowledgement);
 * subject R; observed = the credited cents. Resolves when completed payouts' reports deduct R as a
 * buyer payment by enough to cover it (D at least the credits up to it), or by acknowledgement.
 */
export const buyerPaidMerchantDirectly: Rule = {
  kind: 'buyer_paid_merchant_directly',
  entities: ['statement_line'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const { sourceIbans, referencePattern } = payoutSettings(p);
    const result = await tx`
      with candidates as (
        select s.*, w.word
        from (
          select s.*, row_number() over (partition by s.bank_reference order by s.id) as nth_of_ref
          from (${creditLines(tx, p.environment, referencePattern)}) s
        ) s
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
      -- What payouts that were paid deducted for each reference, as the rows' Transaction Amount (the
      -- document's gross amount: the buyer's payment; stored negative). A cancelled payout's report
      -- deducted nothing.
      deducted as materialized (
        select upper(w.doc_no) as ref, -sum(w.transaction_amount_cents) as cents from payout_report_rows w
        join pass_payouts l on l.payout_uuid = w.payout_uuid and l.status = 'complete'
        where w.environment = ${p.environment} and w.doc_type = 'buyer_payment'
        group by upper(w.doc_no)
      ),
      named as (
        select distinct c.id, c.line_key, c.bank_reference, c.nth_of_ref, c.booking_date, c.amount_cents, c.counterparty_name, c.counterparty_iban, r.ref
        from candidates c join invoice_refs r on r.ref = c.word
      ),
      -- A deduction of the reference covers its credits in order of booking: a buyer who paid an
      -- invoice's first half directly, had it deducted, then paid the second half directly too is
      -- owed a deduction again (any deduction of the reference counted as deducting every credit
      -- naming it, so the second payment was never flagged). A line naming several invoices claims
      -- an unknown share of each: it counts as covered by any deduction of the reference and adds
      -- nothing to the claimed sum (never a finding on a guessed split).
      naming as (select n.*, count(*) over (partition by n.id) = 1 as names_one from named n),
      claimed as (
        select n.*, coalesce(b.cents, 0) as deducted_cents,
               sum(case when n.names_one then n.amount_cents else 0 end)
                 over (partition by n.ref order by n.booking_date, n.id rows unbounded preceding) as claimed_cents
        from naming n
        left join deducted b on b.ref = n.ref
      ),
      flagged as (select * from claimed where deducted_cents = 0 or claimed_cents > deducted_cents)
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'buyer_paid_merchant_directly', 'statement_line',
             case when f.bank_reference is null then '#' || f.id::text
                  when f.nth_of_ref > 1 then f.bank_reference || '#' || f.id::text
                  else f.bank_reference end,
             f.ref, f.ref, null, null, f.amount_cents::text,
             format('Bank credit %s booked %s: %s cents from %s (%s) names invoice %s: the buyer paid the merchant directly; tell the provider, which deducts it from a later payout.%s',
                    coalesce(f.bank_reference, '#' || f.id::text), f.booking_date::text, f.amount_cents,
                    coalesce(f.counterparty_name, '?'), coalesce(f.counterparty_iban, '?'), f.ref,
                    case when f.deducted_cents > 0
                         then format(' Completed payouts deducted %s cents as buyer payments of %s; the direct credits naming it alone come to %s cents up to this one.',
                                     f.deducted_cents, f.ref, f.claimed_cents)
                         else '' end),
             jsonb_build_object('statement_line_id', f.id, 'bank_reference', f.bank_reference, 'booking_date', f.booking_date::text,
                                'amount_cents', f.amount_cents::text, 'invoice_reference', f.ref,
                                'deducted_cents', f.deducted_cents::text, 'credited_cents', f.claimed_cents::text),
             md5(f.line_key || '|' || f.ref)
      from flagged f`;
    return result.count;
  },
};
