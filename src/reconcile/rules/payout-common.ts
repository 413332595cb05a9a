import type { TransactionSql } from 'postgres';
import type { PayoutRuleSettings, RuleParams } from '../types.js';
import { creditLines, instructedCurrency, reversesPayout } from '../../ledger/payout-credits.js';
import { latestPayoutEvents } from '../../ledger/payouts.js';
import { DEFAULT_PAYOUT_SETTLEMENT_DAYS } from '../../config/schema.js';

export const DEFAULT_PAYOUT_SETTINGS: PayoutRuleSettings = { settlementDays: DEFAULT_PAYOUT_SETTLEMENT_DAYS, sourceIbans: [], referencePattern: null };

export function payoutSettings(p: RuleParams): PayoutRuleSettings {
  const s = p.payout ?? DEFAULT_PAYOUT_SETTINGS;
  const norm = (iban: string) => iban.replace(/\s+/g, '').toUpperCase();
  return { ...s, sourceIbans: s.sourceIbans.map(norm), accountIbans: (s.accountIbans ?? []).map(norm) };
}

/**
 * Each payout as its latest event says (ledger/payouts.ts latestPayoutEvents, the choice every view
 * makes). The payout rules ignore an incremental pass's order scope: payouts are few (one a day per
 * environment), and looking at all of them keeps `found` complete for every payout kind, which is
 * what lets the pass resolve the ones whose evidence went away.
 */
export function latestPayouts(tx: TransactionSql, p: RuleParams) {
  return latestPayoutEvents(tx, p.environment);
}

/**
 * Bank credits per payout reference, net of the debits that carry it (payout-credits.ts: the
 * reference wherever it stands in the line, a debit's as a credit's). `credited` is what the lines
 * say the payout got:
 *  - a line carrying one payout's reference counts whole, a debit negative: a bank's storno of a
 *    credit booked twice, or the merchant's return of a cancelled payout, takes it back;
 *  - a line carrying several payouts' references (a CAMT batch entry whose details cover part of
 *    it, camt053.ts) proves each was credited, not how much each got. When its amount is the sum
 *    of the amounts of the payouts it names, each gets its own amount; otherwise (the entry holds
 *    other transactions too) `share_unknown` is set and the line adds nothing to `credited`.
 * Only references some credit carries: a debit alone credits nothing. `other_currency` is set when
 * the lines are in more than one currency, or one of them is an FX payment whose instructed
 * currency is not the booked one (camt053.ts INSTRUCTED_NOTE): amounts of different currencies are
 * never compared or added. `lines` names the bank's entry reference (or our line id) and booking
 * date of each, for people (a debit, a batch marked so); `currency` the lines' (the reports'
 * money at stake).
 */
export function creditsByReference(tx: TransactionSql, p: RuleParams) {
  return tx`
    with carrying as materialized (
      select c.*, case when c.direction = 'debit' then -c.amount_cents else c.amount_cents end as signed_cents,
             ${instructedCurrency(tx, tx`c.remittance`)} as instructed_currency
      from (${creditLines(tx, p.environment, null, true)}) c
      where c.direction = 'credit' or c.carries_payout
    ),
    lines as (select * from carrying l where ${reversesPayout(tx, tx`l`, tx`carrying`)}),
    reference_amounts as (
      select sepa_key as ref, case when count(amount_cents) = count(*) and count(distinct amount_cents) = 1 then min(amount_cents) end as amount
      from (${latestPayouts(tx, p)}) l
      where sepa_key is not null
      group by sepa_key
    ),
    batches as (
      select l.id, count(a.amount) = count(*) and sum(a.amount) = l.amount_cents as explained
      from lines l
      cross join unnest(l.carried_refs) as r(ref)
      left join reference_amounts a on a.ref = r.ref
      where cardinality(l.carried_refs) > 1
      group by l.id, l.amount_cents
    ),
    shares as (
      select r.ref, l.*, b.id is not null as shared,
             case when b.id is null then l.signed_cents
                  when b.explained then case when l.direction = 'debit' then -a.amount else a.amount end end as share
      from lines l
      left join batches b on b.id = l.id
      cross join lateral unnest(case when b.id is null then array[l.payout_reference] else l.carried_refs end) as r(ref)
      left join reference_amounts a on a.ref = r.ref and b.id is not null
      where r.ref is not null
    )
    select ref as sepa_reference, coalesce(sum(share), 0) as credited, count(*) as n, min(currency) as currency,
           bool_or(share is null) as share_unknown,
           count(distinct currency) > 1 or coalesce(bool_or(instructed_currency <> currency), false) as other_currency,
           string_agg(coalesce(bank_reference, '#' || id::text) || ' (' || booking_date::text
                      || case when direction = 'debit' then ', debit' else '' end
                      || case when shared then ', one entry of ' || amount_cents::text || ' cents for ' || array_to_string(carried_refs, ' + ') else '' end
                      || ')', ', ' order by booking_date, id) as lines
    from shares
    group by ref
    having bool_or(direction = 'credit')`;
}

/** The widest offset from UTC of a bank that books SEPA or UK payouts (UTC-4 to UTC+4: payoutWindows). */
export const BANK_OFFSET_HOURS = 4;

/**
 * Each completed payout's settlement window [anchor, deadline = anchor + PAYOUT_SETTLEMENT_DAYS]
 * and whether the payout accounts' imported statements cover it (`covered`; `cover_from`,
 * `cover_to` and `accounts` say by what). What "covered" takes is written in
 * payout-not-on-statement.ts, the first rule that needed it; payout_amount_mismatch waits for it
 * too before it calls a credit short. The payout accounts are PAYOUT_ACCOUNT_IBANS when set, else
 * the accounts payout credits were booked to; each one's statement periods merge into islands
 * (overlapping or touching periods), and every payout account needs an island containing the
 * window.
 */
export function payoutWindows(tx: TransactionSql, p: RuleParams) {
  const { settlementDays, accountIbans, sourceIbans, referencePattern } = payoutSettings(p);
  return tx`
    with payout_accounts as (
      select a as account from unnest(${accountIbans as string[]}::text[]) as a
      union
      select distinct c.account_iban from (${creditLines(tx, p.environment, referencePattern)}) c
      where cardinality(${accountIbans as string[]}::text[]) = 0 and c.account_iban is not null
        and (c.carries_payout or c.matches_pattern or c.counterparty_iban = any(${sourceIbans as string[]}::text[]))
    ),
    periods as (
      select account_iban as a, period_from as f, period_to as t from statement_periods
      where environment = ${p.environment} and account_iban in (select account from payout_accounts)
    ),
    marked as (
      select a, f, t,
             case when f <= max(t) over (partition by a order by f, t rows between unbounded preceding and 1 preceding) then 0 else 1 end as starts
      from periods
    ),
    numbered as (select a, f, t, sum(starts) over (partition by a order by f, t) as island from marked),
    islands as (select a, min(f) as f, max(t) as t from numbered group by a, island),
    due as (
      select l.*, l.anchor + make_interval(days => ${settlementDays}) as deadline
      from (${latestPayouts(tx, p)}) l
      where l.status = 'complete'
    )
    select d.*, i.f as cover_from, i.t as cover_to, i.accounts,
           i.n > 0 and i.n = (select count(*) from payout_accounts) as covered
    from due d
    cross join lateral (
      select max(c.f) as f, min(c.t) as t, jsonb_agg(c.a order by c.a) as accounts, count(*) as n
      -- Periods are the bank's days (wall clock written in UTC); the window is real instants. A
      -- Berlin statement to 8 June ends at 22:00 UTC (summer time), and a credit booked at 00:30 on
      -- 9 June local time is on the next one. The banks of the SEPA area and the UK keep UTC-4
      -- (Guadeloupe, Martinique) to UTC+4 (Reunion), so a period proves the window only with a
      -- margin of BANK_OFFSET_HOURS at each end.
      from islands c where c.f + make_interval(hours => ${BANK_OFFSET_HOURS}::int) <= d.anchor
                       and c.t - make_interval(hours => ${BANK_OFFSET_HOURS}::int) >= d.deadline
    ) i`;
}
