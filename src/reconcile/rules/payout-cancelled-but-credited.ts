import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { creditsByReference, latestPayouts } from './payout-common.js';

/**
 * payout_cancelled_but_credited: the provider says a payout was cancelled, yet the bank credited
 * its SEPA reference (the merchant holds money the provider may reclaim, or will pay again).
 *
 * Evidence: the payout's latest event (by event_time) is payout/cancelled; a credit line of the
 * environment carries its reference, and what the lines carrying it say it got
 * (payout-common.ts creditsByReference: credits less debits with its reference) is more than
 * nothing, or it is named by a batch entry whose share for it is unknown (the entry proves a credit);
 * and no other payout whose latest event is payout/complete carries the same reference (then the
 * credit is that payout's, and the shared reference is a duplicate_event). No waiting: a booked
 * credit is final, unless returned.
 *
 * Near misses: a cancelled payout without a credit (the normal case: 2 % in the simulator); a
 * complete payout with a credit; a payout/complete followed by payout/cancelled whose credit has not
 * been booked; a credit the merchant or the bank sent back (a debit with its reference: net 0).
 *
 * Entity the payout, subject ''; expected 'cancelled', observed = the credited cents (net; of a
 * batch entry of unknown share, none counted). Resolves if a later payout/complete supersedes the
 * cancellation, or the credit is returned.
 */
export const payoutCancelledButCredited: Rule = {
  kind: 'payout_cancelled_but_credited',
  entities: ['payout'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      with latest as (${latestPayouts(tx, p)})
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'payout_cancelled_but_credited', 'payout', l.payout_uuid::text, '',
             null, l.sepa_reference, 'cancelled', c.credited::text,
             format('Payout %s (SEPA reference %s) was cancelled, but the bank credited %s cents%s with its reference: %s.',
                    l.payout_uuid, l.sepa_reference, c.credited,
                    case when c.share_unknown then ' and an unknown part of a batch entry' else '' end, c.lines),
             jsonb_build_object('sepa_reference', l.sepa_reference, 'payout_cents', l.amount_cents::text,
                                'credited_cents', c.credited::text, 'currency', c.currency, 'lines', c.lines, 'event_time', l.event_time),
             md5(c.credited::text || '|' || c.lines)
      from latest l
      join (${creditsByReference(tx, p)}) c on c.sepa_reference = l.sepa_key
      where l.status = 'cancelled' and (c.credited > 0 or c.share_unknown)
        and not exists (select 1 from latest o where o.sepa_key = l.sepa_key and o.status = 'complete')`;
    return result.count;
  },
};
