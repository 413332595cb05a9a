import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { creditsByReference, latestPayouts, payoutWindows } from './payout-common.js';
import { invoiceSettings } from './invoice-common.js';
import { unstatedCurrency } from '../../payout-reports/contract-terms.js';

/**
 * payout_amount_mismatch: a completed payout and the bank credit(s) with its SEPA reference
 * disagree on the amount.
 *
 * Evidence: the payout's latest event is payout/complete with amount A (cents); statement lines of
 * the environment carry its reference (upper-case comparison; payout-common.ts creditsByReference)
 * and say it was credited C: its credits summed, less the debits carrying its reference (a bank's
 * storno of a credit booked twice); A is distinct from C (a payload without amount_cents, A null,
 * counts as a mismatch: the provider did not say what it paid). Summing covers a payout the bank
 * splits over several lines and flags a credit booked twice (C = 2A) until it is reversed. And all
 * of these hold:
 *  - every line's share of C is known: a batch entry naming several payouts counts for each only
 *    when its amount is the sum of theirs (then each got its own); one whose details cover only
 *    part of it proves each payout present, not its amount, so the payouts it names are not judged;
 *  - C and A are in one currency: the lines are all in one currency, none is an FX payment whose
 *    instructed currency is another (camt053.ts), and the payout's report rows (payout_report_rows,
 *    when imported) name no other currency, a row naming none being in the contract's currency,
 *    else EUR (unstatedCurrency, as every report takes it). Payout events name no currency; EUR 1,170.00 booked for
 *    a GBP 1,000.00 payout says nothing about the amount;
 *  - C > A (an excess is final once booked: money booked does not go away, a storno excepted), or
 *    the payout accounts' statements cover its settlement window [anchor, anchor +
 *    PAYOUT_SETTLEMENT_DAYS] (payout-common.ts payoutWindows, as payout_not_on_statement): a
 *    shortfall is flagged only once the rest of the credit could not still be booked unseen (a
 *    morning intraday statement with the first part of a split credit is no evidence).
 *
 * Near misses: a credit of the same amount (matched); a credit of another reference (not this
 * payout's); a cancelled payout's credit (payout_cancelled_but_credited); a short credit before the
 * statements cover the window; a duplicate credit and its storno. Two completed payouts sharing one
 * reference and one credit (duplicate_event) each compare their own amount with it.
 *
 * Entity the payout, subject ''; expected = A, observed = C, both in cents. Resolves when the sums
 * agree. The evidence hash covers A, C and the lines, so a new line reopens an acknowledged one.
 */
export const payoutAmountMismatch: Rule = {
  kind: 'payout_amount_mismatch',
  entities: ['payout'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'payout_amount_mismatch', 'payout', l.payout_uuid::text, '',
             null, l.sepa_instruction_id, l.amount_cents::text, c.credited::text,
             format('Payout %s (SEPA reference %s) is %s cents, but the bank credited %s cents: %s.',
                    l.payout_uuid, l.sepa_instruction_id, coalesce(l.amount_cents::text, '(no amount)'), c.credited, c.lines),
             jsonb_build_object('sepa_reference', l.sepa_instruction_id, 'payout_cents', l.amount_cents::text,
                                'credited_cents', c.credited::text, 'currency', c.currency, 'lines', c.lines),
             md5(coalesce(l.amount_cents::text, '') || '|' || c.credited::text || '|' || c.lines)
      from (${latestPayouts(tx, p)}) l
      join (${creditsByReference(tx, p)}) c on c.sepa_reference = l.sepa_key
      join (${payoutWindows(tx, p)}) w on w.payout_uuid = l.payout_uuid
      where l.status = 'complete' and l.amount_cents is distinct from c.credited
        and not c.share_unknown and not c.other_currency
        and not exists (
          select 1 from payout_report_rows r
          where r.environment = ${p.environment} and r.payout_uuid = l.payout_uuid
            and upper(coalesce(btrim(r.currency), ${unstatedCurrency(invoiceSettings(p).terms)}::text)) <> c.currency)
        and (l.amount_cents is null or c.credited > l.amount_cents or w.covered)`;
    return result.count;
  },
};
