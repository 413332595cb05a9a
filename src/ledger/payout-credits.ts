import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { sepaHolders } from './sepa-claims.js';
import { sepaKey } from './sepa-key.js';

/**
 * The currency an FX payment was instructed in, from a statement line's remittance text: the CAMT.053
 * reader keeps what was instructed in another currency there ('instructed in GBP 100000':
 * statements/camt053.ts INSTRUCTED_NOTE). Null for a line that is no FX payment. Amounts of another
 * currency than the booked one are never compared (the payout rules, the payouts report, the page).
 */
export function instructedCurrency(sql: Sql | TransactionSql, remittance: PendingQuery<Row[]>) {
  return sql`substring(${remittance} from '(?:^|; )instructed in ([A-Z]{3}) [0-9]')`;
}

/**
 * Bank credit lines, each with the payout reference it carries. Banks put a payout's SEPA
 * reference in the end-to-end id, the instruction id, or anywhere in the remittance text
 * ("Rechnung RE2026000001 Auszahlung PO2026112200000013"), so a line's reference as the import
 * read it (statement_lines.sepa_reference: end-to-end id, else instruction id, else the first
 * id-like word) may not be the payout's. A line carries payout P when P's reference is that
 * reference or any word of its remittance text; the first such one (reference first, then words
 * in order) is its payout_reference. A line that carries no known payout names, in this order: the
 * first candidate matching PAYOUT_REFERENCE_PATTERN when it is set (the reference that made it a
 * payout credit); else the first candidate shaped like the payouts' references the ledger holds
 * (same length, same letters with the digits taken out: "PO" + 16 digits for PO2026112200000013),
 * since a bank that writes the reference only in its text puts other id-like words before it; else
 * the import's own reference. What the bank sent stays as stored. A blank reference is no
 * reference: a payout without one (cancelled before its transfer was instructed) carries nothing,
 * and the empty word a text's trailing full stop splits off is no candidate.
 *
 * Cost: a split of each credit's remittance text, its words hash-joined with the environment's
 * payout references in one set (\`carried\`), so it scales with credit lines plus payouts. Looked up
 * line by line (a LIMIT 1 per line), the planner scanned the whole reference list for each line:
 * quadratic in payouts (100,000 orders in payouts of 50: 2,020 lines x ~1,000 references, 1.8 s
 * per rule that reads credits; bench/README.md, reconcile).
 *
 * `carried_refs`: every known payout reference the line carries (empty when none). A CAMT batch
 * entry whose transaction details cover only part of it stays one line, its details listed in its
 * remittance text (statements/camt053.ts), so one line can carry several payouts' references: it
 * proves each of them was credited, though not how much of it each got (payout-common.ts).
 *
 * `withDebits`: also the debit lines, with the same columns (`direction` tells them apart). A bank's
 * reversal (storno) of a payout credit, or the merchant's return of it, is a debit carrying the
 * payout's reference the same way a credit does; only the payout rules' sums read them
 * (payout-common.ts creditsByReference), every other reader wants credits.
 */
export function creditLines(sql: Sql | TransactionSql, environment: ProviderEnvironment, referencePattern: string | null = null, withDebits = false) {
  const directions = withDebits ? ['credit', 'debit'] : ['credit'];
  const candidates = sql`(
    select s.sepa_reference as ref, 0::bigint as pos
    union all
    select w.word, w.pos from regexp_split_to_table(upper(coalesce(s.remittance, '')), '[^A-Z0-9]+') with ordinality as w(word, pos)
    where w.word <> ''
  )`;
  return sql`
    with payout_refs as materialized (
      select distinct ${sepaKey(sql, sql`sepa_instruction_id`)} as ref from payout_events
      where environment = ${environment} and btrim(sepa_instruction_id) <> ''
    ),
    payout_shapes as materialized (
      select distinct length(ref) as len, regexp_replace(ref, '[0-9]', '', 'g') as letters from payout_refs
    ),
    carried as (
      select s.id, (array_agg(c.ref order by c.pos))[1] as ref, array_agg(distinct c.ref::text) as refs
      from statement_lines s
      cross join lateral ${candidates} c
      join payout_refs r on r.ref = c.ref
      where s.environment = ${environment} and s.direction = any(${directions}::statement_direction[])
      group by s.id
    )
    select s.id, s.line_key, s.account_iban, s.bank_reference, s.booking_date, s.amount_cents, s.currency, s.counterparty_iban, s.counterparty_name,
           s.sepa_reference, s.remittance, s.direction::text as direction,
           coalesce(m.ref, pat.ref, shaped.ref, s.sepa_reference) as payout_reference,
           coalesce(m.refs, '{}'::text[]) as carried_refs,
           m.ref is not null as carries_payout,
           pat.ref is not null as matches_pattern
    from statement_lines s
    left join carried m on m.id = s.id
    left join lateral (
      select c.ref from ${candidates} c
      where ${referencePattern}::text is not null and c.ref <> '' and c.ref ~ ${referencePattern}::text order by c.pos limit 1
    ) pat on true
    left join lateral (
      select c.ref from ${candidates} c
      where exists (select 1 from payout_shapes h where h.len = length(c.ref) and h.letters = regexp_replace(c.ref, '[0-9]', '', 'g'))
      order by c.pos limit 1
    ) shaped on true
    where s.environment = ${environment} and s.direction = any(${directions}::statement_direction[])`;
}

/**
 * The credit lines (creditLines) with the payout each pays, `payout_uuid`: the payout that holds
 * the reference the line carries (sepa-claims.ts). A later payout claiming the same reference gets
 * none of its lines, so no view shows one credit as paying two payouts; a line that carries no
 * payout's reference is left out. With them the debits that carry a payout's reference (a bank's
 * storno of a credit booked twice, the merchant's return of a cancelled payout), `signed_cents`
 * negative, so the views' sums are what the payout rules net (payout-common.ts creditsByReference);
 * `direction` tells them apart.
 */
export function payoutCredits(sql: Sql | TransactionSql, environment: ProviderEnvironment) {
  return sql`
    with carrying as materialized (
      select * from (${creditLines(sql, environment, null, true)}) c where c.direction = 'credit' or c.carries_payout
    )
    select h.payout_uuid, l.*, case when l.direction = 'debit' then -l.amount_cents else l.amount_cents end as signed_cents
    from carrying l
    join (select distinct payout_uuid, sepa_key as payout_reference from (${sepaHolders(sql, environment)}) c) h
      on h.payout_reference = l.payout_reference
    where ${reversesPayout(sql, sql`l`, sql`carrying`)}`;
}

/**
 * Whether line `line` of the set `lines` (creditLines' rows) counts in its payout's sum: every
 * credit, and a debit that takes the payout back: a bank's storno (no counterparty, or the payout's
 * sender) or the merchant's return of it to the sender. A debit carrying the reference to anyone
 * else (the merchant forwarding the payout to its savings, "Umbuchung Auszahlung PO…") is not a
 * reversal: netted, it made a payout credited in full read "credited 0". The sender is whoever
 * sent a credit carrying the same reference, so no setting is needed and every view agrees.
 */
export function reversesPayout(sql: Sql | TransactionSql, line: PendingQuery<Row[]>, lines: PendingQuery<Row[]>) {
  return sql`(${line}.direction = 'credit' or ${line}.counterparty_iban is null
      or exists (select 1 from ${lines} k where k.direction = 'credit' and k.payout_reference = ${line}.payout_reference
                 and k.counterparty_iban = ${line}.counterparty_iban))`;
}
