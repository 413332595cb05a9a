import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { payoutSettings } from './payout-common.js';
import { creditLines } from '../../ledger/payout-credits.js';

/**
 * statement_credit_without_payout: money arrived that looks like a payout, and no payout event
 * explains it.
 *
 * A credit line is a payout credit when it comes from one of PAYOUT_SOURCE_IBANS (the provider's
 * paying accounts; compared without spaces, upper case), or when PAYOUT_REFERENCE_PATTERN is set
 * and its SEPA reference matches it (a Postgres regular expression, e.g. '^PO[0-9]{16}$' for the
 * simulator). With neither set, nothing is a payout credit and this rule finds nothing: guessing
 * from the reference alone would flag every customer transfer with an RF creditor reference.
 *
 * Evidence: a payout credit (direction credit) that carries no payout_events row's reference of the
 * environment, in its reference or anywhere in its remittance text (payout-credits.ts) (any status: a cancelled payout's credit is payout_cancelled_but_credited),
 * or that has no reference at all. No waiting for the webhook: the bank books a payout hours after
 * the provider sends payout/complete (2-20 h in the simulator), far longer than the webhook's retry
 * window, so an honest credit's event is already here; one that arrives later resolves the finding.
 *
 * Near misses: a debit to the provider's IBAN (not a credit); a credit from another IBAN whose
 * reference matches no pattern (an ordinary customer payment); a payout credit whose reference a
 * payout has, whatever its amount (payout_amount_mismatch decides that).
 *
 * Entity statement_line = the bank's entry reference (what a person finds in the banking portal and
 * what the simulator's ground truth names), or '#<line id>' without one. Of the credit lines that
 * share an entry reference (two accounts), the first stored keeps it and each later one is
 * '<reference>#<line id>': ranked among every credit line, which are never deleted, so a line
 * stored later does not rename a finding (and lose its acknowledgement). Subject ''. observed =
 * the credited cents.
 */
export const statementCreditWithoutPayout: Rule = {
  kind: 'statement_credit_without_payout',
  entities: ['statement_line'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const { sourceIbans, referencePattern } = payoutSettings(p);
    if (sourceIbans.length === 0 && !referencePattern) return 0;
    const result = await tx`
      with flagged as (
        select * from (
          select s.*, row_number() over (partition by s.bank_reference order by s.id) as nth_of_ref
          from (${creditLines(tx, p.environment, referencePattern)}) s
        ) s
        where (s.counterparty_iban = any(${sourceIbans as string[]}::text[]) or s.matches_pattern)
          and not s.carries_payout
      )
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'statement_credit_without_payout', 'statement_line',
             case when f.bank_reference is null then '#' || f.id::text
                  when f.nth_of_ref > 1 then f.bank_reference || '#' || f.id::text
                  else f.bank_reference end,
             '', null, f.payout_reference, null, f.amount_cents::text,
             format('Bank credit %s booked %s: %s cents from %s (%s) with reference %s, and no payout carries that reference.',
                    coalesce(f.bank_reference, '#' || f.id::text), f.booking_date::text, f.amount_cents,
                    coalesce(f.counterparty_name, '?'), coalesce(f.counterparty_iban, '?'), coalesce(f.payout_reference, '(none)')),
             jsonb_build_object('statement_line_id', f.id, 'bank_reference', f.bank_reference, 'booking_date', f.booking_date::text,
                                'amount_cents', f.amount_cents::text, 'counterparty_iban', f.counterparty_iban,
                                'sepa_reference', f.sepa_reference, 'remittance', f.remittance),
             md5(f.line_key)
      from flagged f`;
    return result.count;
  },
};
