import type { PendingQuery, Row, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { statementKeyPrefix } from './line-key.js';
import type { StatedBalance, StatementSection } from './types.js';

/**
 * Consecutive statements: one opens with the balance the other closes with. A bank that sends two
 * MT940 statements for one day (:28C:00001/1 then 00001/2, or 00001 then 00002) opens the second
 * with the first's :62F: as its :60F:, both dated that day; each covers the day wholly (mt940.ts),
 * yet the second holds only the bookings after the first's closing balance. A CAMT.053 day sent in
 * two statements, each with the whole day as its FrToDt, opens the second with the first's CLBD
 * as its OPBD the same way (camt053.ts). Matched by the day
 * alone (rule 3 of overlap.ts), a booking of the second equal to one of the first in day and amount
 * would be taken for the first's and not stored, and by rule 2 one under a reference the bank
 * reuses (a standing order's), although both statements balance
 * (test/statements/consecutive-statements.test.ts). A copy of the first, sent again under another
 * number, is not consecutive with it: it opens where the first opens.
 *
 * So a stored entry is no match for rules 2 and 3 when its statement, or the statement whose lines
 * hold its booking (rule 2 may pair with an entry linked to another's lines), and the one being
 * imported are consecutive: both balanced (opening + bookings = closing held, each on its own), of
 * the same account, the closing balance of one equal to the opening balance of the other in amount,
 * currency and date, and neither their opening nor their closing balances equal. The last condition
 * keeps a statement whose bookings net to nothing within one day (opening = closing) from passing
 * for the continuation of its own copy, or of a statement it merely ends with: where the shared
 * balance is also an end of one of them, the balances cannot tell which end it is, and the day
 * decides as without balances. A statement without both balances, or stored before migration 0027
 * (no statement_balances row), is matched by the rules alone too.
 *
 * A day a bank sends in three statements or more is a chain: the third opens with the second's
 * closing balance, not with the first's, yet holds none of the first's bookings either. So the
 * stored statements consecutive with this one are those a chain of such steps reaches, each step
 * going the same way (back from this one's opening balance, from closing to opening, or on from
 * its closing balance): going back and then on again could reach a copy of this statement. Steps
 * are taken only through balances dated within this statement's own span (its opening to its
 * closing balance's date), so the chain stays within its days instead of walking the account's
 * history; and no statement of the chain may open or close where this one does (a statement and
 * its reversal, then its copy, would otherwise chain a copy in).
 */

/** The statement's balances as statement_balances keeps them (a row only where its reader states them). */
export function writeBalances(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  section: StatementSection,
): PendingQuery<Row[]> | null {
  const ends = section.ends;
  if (!ends || (!ends.opening && !ends.closing)) return null;
  const { opening: o, closing: c } = ends;
  const balanced = o !== null && c !== null && section.balances?.state === 'balanced';
  return tx`
    insert into statement_balances (statement_id, section_index, environment, statement_key, account_iban,
                                    opening_kind, opening_date, opening_currency, opening_cents,
                                    closing_kind, closing_date, closing_currency, closing_cents, balanced)
    values (${statementId}, ${sectionIndex}, ${environment}, ${statementKeyPrefix(section)}, ${section.accountIban},
            ${o?.kind ?? null}, ${o?.date ?? null}::date, ${o?.currency ?? null}, ${o ? o.cents.toString() : null}::bigint,
            ${c?.kind ?? null}, ${c?.date ?? null}::date, ${c?.currency ?? null}, ${c ? c.cents.toString() : null}::bigint, ${balanced})`;
}

/**
 * A condition on a stored entry key (`entryKey`, an SQL expression of key format 2: its first 32
 * characters are its statement's prefix, line-key.ts): its statement and `section` are
 * consecutive, directly or through a chain (above). Constant false when `section` is not balanced
 * with both balances, or names no account. The chain is one uncorrelated subquery: Postgres
 * evaluates it once per statement of the rules, not once per entry.
 */
export function consecutiveWith(tx: TransactionSql, environment: ProviderEnvironment, section: StatementSection): (entryKey: PendingQuery<Row[]>) => PendingQuery<Row[]> {
  const o = section.ends?.opening;
  const c = section.ends?.closing;
  if (!o || !c || section.balances?.state !== 'balanced' || section.accountIban === null) return () => tx`false`;
  const balance = (b: StatedBalance) => tx`(${b.cents.toString()}::bigint, ${b.currency}::text, ${b.date}::date)`;
  const [first, last] = o.date <= c.date ? [o.date, c.date] : [c.date, o.date];
  type End = 'opening' | 'closing';
  const end = (alias: 'b' | 'k', which: End) => tx`(${tx(`${alias}.${which}_cents`)}, ${tx(`${alias}.${which}_currency`)}, ${tx(`${alias}.${which}_date`)})`;
  // A stored statement of this account that balanced, and shares neither end with this one.
  const member = tx`
    b.environment = ${environment} and b.balanced and b.account_iban = ${section.accountIban}
    and ${end('b', 'opening')} <> ${balance(o)} and ${end('b', 'closing')} <> ${balance(c)}`;
  const columns = tx`b.statement_key, b.opening_cents, b.opening_currency, b.opening_date, b.closing_cents, b.closing_currency, b.closing_date`;
  // One direction of the chain: statements whose `meets` end equals the `from` end of a statement
  // already reached (this one's first), the shared balance within this one's span; neither end of
  // a step equal to the other's. Back: b closes where k opens; on: b opens where k closes.
  const walk = (name: 'back' | 'onward', from: End, meets: End, start: StatedBalance) => tx`
      ${tx(name)}(statement_key, opening_cents, opening_currency, opening_date, closing_cents, closing_currency, closing_date) as (
        select ${columns}
        from statement_balances b
        where ${member} and ${end('b', meets)} = ${balance(start)}
        union
        select ${columns}
        from ${tx(name)} k join statement_balances b on ${end('b', meets)} = ${end('k', from)}
        where ${member} and ${tx(`k.${from}_date`)} between ${first}::date and ${last}::date
          and ${end('b', 'opening')} <> ${end('k', 'opening')}
          and ${end('b', 'closing')} <> ${end('k', 'closing')}
      )`;
  const chain = tx`
    with recursive ${walk('back', 'opening', 'closing', o)}, ${walk('onward', 'closing', 'opening', c)}
    select statement_key from back union select statement_key from onward`;
  return (entryKey) => tx`left(${entryKey}, 32) in (${chain})`;
}
