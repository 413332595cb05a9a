import type { TransactionSql } from 'postgres';
import { ISO_FORMAT, insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { creditLines } from '../../ledger/payout-credits.js';
import { payoutSettings, payoutWindows } from './payout-common.js';

/**
 * payout_not_on_statement: a completed payout whose money never reached the merchant's account.
 *
 * Evidence, all of it required, with S = PAYOUT_SETTLEMENT_DAYS (default 3):
 *  - the payout's latest event (payout-common.ts) is payout/complete;
 *  - its deadline D = anchor + S days has passed (D <= the pass's clock), where anchor is the
 *    payout's event_time, falling back to received_at only when the payload has none. Why
 *    event_time: the bank books the credit relative to when the provider sent the money, which is
 *    what event_time records; received_at adds only our own delays (retries up to ~31 min, a
 *    receiver outage of hours), so measured from it a late webhook would postpone the alarm by its
 *    lateness for nothing. It also puts the window in the same clock as the statements' booking
 *    dates and periods, which the next condition compares it with;
 *  - the payout accounts' imported statements cover the whole window [anchor, D]. The payout
 *    accounts are PAYOUT_ACCOUNT_IBANS when set (the merchant says where payouts go); otherwise the
 *    accounts that payout credits were booked to (a credit carrying a payout's reference, from
 *    PAYOUT_SOURCE_IBANS, or matching PAYOUT_REFERENCE_PATTERN): the events do not name the
 *    receiving account, so only where payouts have been seen to arrive is known. With no payout
 *    account known, nothing is flagged. Each payout account's periods (statement_periods, one per
 *    statement of a file, with its account: CAMT.053 FrToDt, MT940 its whole days after the opening
 *    balance's day to the closing balance's day, CSV first to last booking day; overlapping or
 *    touching periods merge into one island) must have an island containing the window: since we
 *    cannot tell which of several payout accounts this payout went to, every one of them must show
 *    it is not there. A file's Monday and Wednesday statements leave Tuesday uncovered, and a
 *    statement of another account (a savings account) covers nothing. Without that we cannot tell
 *    "not credited" from "the statement for those days was never imported": a missing statement
 *    must not flag every payout. A statement that names no account (a CSV without the account
 *    column) covers no payout account. Periods are the bank's own days, in a zone not known: an
 *    island proves the window only when it starts 4 hours before the anchor and ends 4 hours after
 *    the deadline (payout-common.ts BANK_OFFSET_HOURS: the SEPA area's and the UK's banks keep
 *    UTC-4 to UTC+4), so a statement of a late-evening payout's last day is not taken to cover the
 *    hours that fall on the bank's next day;
 *  - no statement line in the environment is a credit carrying the payout's SEPA reference
 *    (compared upper-case), whatever its booking date or amount (a wrong amount is
 *    payout_amount_mismatch, not this). A batch entry that names several payouts in its details
 *    (payout-credits.ts carried_refs) carries each of them.
 *
 * The window and its coverage are computed once for the payout rules (payout-common.ts
 * payoutWindows); payout_amount_mismatch waits for the same coverage before calling a credit short.
 *
 * Near misses, never flagged: a credit booked inside the window; a payout still inside its window
 * (not due yet); a payout whose window the statements do not cover (a gap, or the last days not yet
 * imported); a cancelled payout (no credit is expected). Two completed payouts sharing one reference
 * (duplicate_event) are both matched by the one credit.
 *
 * Resolves when a credit with the reference is imported, or the payout is cancelled afterwards.
 * Entity the payout, subject ''; expected = the payout's amount in cents. The evidence hash covers
 * the reference and amount only, so an acknowledged finding stays acknowledged as statements grow.
 */
export const payoutNotOnStatement: Rule = {
  kind: 'payout_not_on_statement',
  entities: ['payout'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const { settlementDays } = payoutSettings(p);
    const result = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'payout_not_on_statement', 'payout', d.payout_uuid::text, '',
             null, d.sepa_instruction_id, d.amount_cents::text, null,
             format('Payout %s (SEPA reference %s, %s cents) completed at %s; no bank credit carries its reference %s days later, though the statements of the payout account(s) cover %s to %s.',
                    d.payout_uuid, coalesce(d.sepa_instruction_id, '(none)'), coalesce(d.amount_cents::text, '?'),
                    to_char(d.anchor at time zone 'UTC', ${ISO_FORMAT}), ${settlementDays}::int,
                    to_char(d.cover_from at time zone 'UTC', ${ISO_FORMAT}), to_char(d.cover_to at time zone 'UTC', ${ISO_FORMAT})),
             jsonb_build_object('sepa_reference', d.sepa_instruction_id, 'amount_cents', d.amount_cents::text,
                                'anchor', to_char(d.anchor at time zone 'UTC', ${ISO_FORMAT}),
                                'deadline', to_char(d.deadline at time zone 'UTC', ${ISO_FORMAT}),
                                'statements_cover', jsonb_build_array(to_char(d.cover_from at time zone 'UTC', ${ISO_FORMAT}),
                                                                      to_char(d.cover_to at time zone 'UTC', ${ISO_FORMAT})),
                                'settlement_days', ${settlementDays}::int, 'accounts', d.accounts),
             md5(coalesce(d.sepa_instruction_id, '') || '|' || coalesce(d.amount_cents::text, ''))
      from (${payoutWindows(tx, p)}) d
      where d.deadline <= ${p.now.toISOString()}::timestamptz and d.covered
        and not exists (
          select 1 from (${creditLines(tx, p.environment)}) s where s.payout_reference = d.sepa_key or d.sepa_key = any(s.carried_refs))`;
    return result.count;
  },
};
