import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { creditsByReference, latestPayouts } from './payout-common.js';

/**
 * payout_amount_mismatch: a completed payout and the bank credit(s) with its SEPA reference
 * disagree on the amount.
 *
 * Evidence: the payout's latest event is payout/complete with amount A (cents); the statement lines
 * of the environment that are credits with its reference (upper-case comparison) exist and sum to
 * C; A is distinct from C (a payload without amount_cents, A null, counts as a mismatch: the
 * provider did not say what it paid). Summing covers a payout the bank splits over several lines
 * and flags a credit booked twice (C = 2A). No settlement wait: both amounts are final once booked;
 * a split credit whose second half is not imported yet is flagged and resolves when it is.
 *
 * Near misses: a credit of the same amount (matched); a credit of another reference (not this
 * payout's); a cancelled payout's credit (payout_cancelled_but_credited). Two completed payouts
 * sharing one reference and one credit (duplicate_event) each compare their own amount with it.
 *
 * Entity the payout, subject ''; expected = A, observed = C, both in cents. Resolves when the sums
 * agree. The evidence hash covers A, C and the lines, so a new credit reopens an acknowledged one.
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
      where l.status = 'complete' and l.amount_cents is distinct from c.credited`;
    return result.count;
  },
};
