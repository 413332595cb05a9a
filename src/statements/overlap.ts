import type { TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { entryKey, entryReference, positionKey, wholeDays } from './line-key.js';
import { addTotal, totalsDifference } from './totals.js';
import { StatementFormatError, type StatementLine, type StatementSection, type Totals } from './types.js';

/**
 * Which bookings of a statement are already in the ledger: the overlap rule. Every statement is
 * taken entry by entry (a CAMT Ntry, an MT940 :61:, a CSV row: what the balances move by, a split
 * batch being one entry of several lines), and an entry is the booking that is already stored
 *
 *  1. by its position: the entry of the same statement identity and index (the same statement
 *     imported again, from any bytes); its amount, currency and direction must be the stored ones,
 *     else the file is refused as a corrected statement under an old identity;
 *  2. by the bank's own reference: a stored entry of the same account, booking date, currency,
 *     direction and amount with the same entry reference (CAMT Ntry AcctSvcrRef, MT940 '//'
 *     reference, CSV entry_reference), when no other entry of the statement has that reference
 *     with the same values ('NONREF' is none; banks reuse one reference for a standing order's
 *     several bookings);
 *  3. by the day: when the statement or a stored statement of the account covers the booking day
 *     wholly, that statement holds every booking of the day, so the day's equal entries (account,
 *     date, currency, direction, amount) of the new statement and the stored ones are the same
 *     bookings, paired in order, as many as both have; the rest are new. References and
 *     end-to-end ids play no part: formats differ in what they carry (a CSV without the reference
 *     column, an MT940 without EREF), amounts and days do not. A split batch is one entry of its
 *     total, so it is the same booking as the unsplit entry of another format;
 *  4. otherwise it is a new booking and its lines are stored. So two equal bookings of one
 *     statement stay two, and a day two statements cover only in part (CAMT periods with times of
 *     day) is merged by references alone: nothing proves that two equal card payments of a
 *     morning and an afternoon statement are one.
 *
 * A statement or account that names no account (a CSV without the account column) is matched by
 * its position only. Every entry is recorded in statement_entries with the stored entry that
 * holds its booking (its own, or the overlapping statement's), so each statement keeps all of its
 * bookings and its stored lines are checked to add up to its booked entries. The first statement
 * to bring a booking keeps its details: a later export that splits what an earlier one held whole
 * (or the reverse) links to it and adds no lines.
 *
 * Imports of one environment take a transaction lock, so two overlapping files never both see a
 * booking as new.
 */

export interface SectionCounts {
  /** lines stored as new bookings */
  new: number;
  /** lines of entries this statement (the same identity) had already brought */
  known: number;
  /** lines of entries an overlapping statement had already brought */
  overlap: number;
}

// Bounded statement size and parameter arrays for very long statements; one statement text serves every chunk.
const CHUNK = 5000;

export async function createStaging(tx: TransactionSql): Promise<void> {
  await tx`
    create temporary table import_lines (
      n integer not null, position_key text not null, entry_key text not null, entry_reference text, whole_day boolean not null,
      entry_index integer not null, tx_index integer not null, account_iban text, booking_date date not null,
      value_date date, amount_cents bigint not null, currency text not null, direction statement_direction not null,
      counterparty_iban text, counterparty_name text, end_to_end_id text, bank_reference text, remittance text,
      sepa_reference text
    ) on commit drop`;
  await tx`
    create temporary table import_entries (
      entry_key text primary key, entry_index integer not null, account_iban text, booking_date date not null, currency text not null,
      direction statement_direction not null, amount_cents bigint not null, entry_reference text, usable_reference text,
      whole_day boolean not null, lines integer not null, known_key text, target text, match text
    ) on commit drop`;
}

/**
 * Stages, matches and stores one statement of a file (the statements before it in the file are
 * already stored, so overlaps inside one file are found too), and checks its stored lines.
 */
export async function storeSection(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  section: StatementSection,
  lines: readonly StatementLine[],
  firstN: number,
): Promise<SectionCounts> {
  await beginSection(tx);
  await stageLines(tx, section, lines, firstN);
  return finishSection(tx, environment, statementId, sectionIndex, section, false);
}

/** Empties the staging tables for the next statement. */
export async function beginSection(tx: TransactionSql): Promise<void> {
  await tx`truncate import_lines, import_entries`;
}

/** Stages lines of the statement; `section` may be provisional (types.ts SectionSink), then finishSection re-keys them. */
export async function stageLines(tx: TransactionSql, section: StatementSection, lines: readonly StatementLine[], firstN: number): Promise<void> {
  const days = wholeDays(section);
  for (let i = 0; i < lines.length; i += CHUNK) await stage(tx, section, days, lines.slice(i, i + CHUNK), firstN + i);
}

/**
 * Matches and stores the staged statement. `provisional`: its lines were staged before the
 * statement's identity and period were known (a CSV read in parts), so their keys and whole days
 * are computed now, in SQL, by the rule of line-key.ts.
 */
export async function finishSection(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  section: StatementSection,
  provisional: boolean,
): Promise<SectionCounts> {
  const days = wholeDays(section);
  if (provisional) await rekeyStaged(tx, section, days);
  await collectEntries(tx);
  // Temporary tables have no statistics: without them the planner may hash the whole ledger to
  // match a few thousand staged rows (1 s a statement at 1,000,000 stored lines).
  await tx`analyze import_lines, import_entries`;
  await matchEntries(tx, environment, sectionIndex);
  await write(tx, environment, statementId, sectionIndex, section, days);
  await verifyStored(tx, environment, sectionIndex, section);
  const counts = await tx<{ match: string; lines: number }[]>`select match, sum(lines)::int as lines from import_entries group by match`;
  const of = (...m: string[]) => counts.filter((c) => m.includes(c.match)).reduce((n, c) => n + c.lines, 0);
  return { new: of('new'), known: of('position'), overlap: of('reference', 'day') };
}

/** positionKey and entryKey (line-key.ts: sha256 of the parts joined by line feeds) and the whole days, for lines staged provisionally. */
export async function rekeyStaged(tx: TransactionSql, section: StatementSection, days: { first: string | null; last: string | null }): Promise<void> {
  const id = section.identity;
  await tx`
    update import_lines set
      position_key = encode(sha256(convert_to(concat_ws(E'\n', 'position', ${id}::text, entry_index::text, tx_index::text), 'UTF8')), 'hex'),
      entry_key = encode(sha256(convert_to(concat_ws(E'\n', 'entry', ${id}::text, entry_index::text), 'UTF8')), 'hex'),
      whole_day = coalesce(booking_date between ${days.first}::date and ${days.last}::date, false)`;
}

async function stage(tx: TransactionSql, section: StatementSection, days: { first: string | null; last: string | null }, lines: StatementLine[], from: number): Promise<void> {
  const col = <T>(f: (l: StatementLine, i: number) => T) => lines.map((l, i) => f(l, i));
  const whole = (l: StatementLine) => days.first !== null && days.last !== null && l.bookingDate >= days.first && l.bookingDate <= days.last;
  await tx`
    insert into import_lines (n, position_key, entry_key, entry_reference, whole_day, entry_index, tx_index, account_iban, booking_date,
                              value_date, amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id,
                              bank_reference, remittance, sepa_reference)
    select u.n::integer, u.position_key, u.entry_key, u.entry_reference, u.whole_day::boolean, u.entry_index::integer, u.tx_index::integer,
           u.account_iban, u.booking_date::date, u.value_date::date, u.amount_cents::bigint, u.currency,
           u.direction::statement_direction, u.counterparty_iban, u.counterparty_name, u.end_to_end_id, u.bank_reference,
           u.remittance, u.sepa_reference
    from unnest(${col((_, i) => String(from + i))}::text[], ${col((l) => positionKey(section, l))}::text[], ${col((l) => entryKey(section, l))}::text[],
                ${col(entryReference)}::text[], ${col((l) => String(whole(l)))}::text[],
                ${col((l) => String(l.entryIndex))}::text[], ${col((l) => String(l.txIndex))}::text[],
                ${col((l) => l.accountIban)}::text[], ${col((l) => l.bookingDate)}::text[], ${col((l) => l.valueDate)}::text[],
                ${col((l) => l.amountCents.toString())}::text[], ${col((l) => l.currency)}::text[], ${col((l) => l.direction)}::text[],
                ${col((l) => l.counterpartyIban)}::text[], ${col((l) => l.counterpartyName)}::text[], ${col((l) => l.endToEndId)}::text[],
                ${col((l) => l.bankReference)}::text[], ${col((l) => l.remittance)}::text[], ${col((l) => l.sepaReference)}::text[])
      as u(n, position_key, entry_key, entry_reference, whole_day, entry_index, tx_index, account_iban, booking_date, value_date,
           amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference)`;
}

/** The statement's entries: a split batch's lines share their entry's account, date, currency, direction and reference. */
async function collectEntries(tx: TransactionSql): Promise<void> {
  await tx`
    insert into import_entries (entry_key, entry_index, account_iban, booking_date, currency, direction, amount_cents, entry_reference,
                                usable_reference, whole_day, lines)
    select g.entry_key, g.entry_index, g.account_iban, g.booking_date, g.currency, g.direction, g.amount_cents, g.entry_reference,
           case when count(*) over (partition by g.account_iban, g.booking_date, g.currency, g.direction, g.amount_cents, g.entry_reference) = 1
                then g.entry_reference end,
           g.whole_day, g.lines
    from (
      select entry_key, min(entry_index) as entry_index, min(account_iban) as account_iban, min(booking_date) as booking_date,
             min(currency) as currency, min(direction::text)::statement_direction as direction, sum(amount_cents) as amount_cents,
             case when upper(min(entry_reference)) <> 'NONREF' then min(entry_reference) end as entry_reference, bool_and(whole_day) as whole_day, count(*)::int as lines
      from import_lines group by entry_key
    ) g`;
}

/** Rules 1-4 of the header, in that order; each sees only the entries the ones before left. */
async function matchEntries(tx: TransactionSql, environment: ProviderEnvironment, sectionIndex: number): Promise<void> {
  // 1. Position: this statement's entry, or (lines stored between migrations 0009 and 0013) its first line's position.
  // Each staged row probes the ledger's indexes: a lateral subquery with 'offset 0' is run per row,
  // never flattened into a join. The ledger's rows written in this transaction have no statistics
  // (autovacuum cannot see them), and with a flattened join the planner took statement_entries for
  // one row and scanned it once per staged row: 31 s for a statement of 4,000 entries at 8,000 stored.
  await tx`
    update import_entries e set known_key = m.entry_key, target = m.lines_entry_key, match = 'position'
    from import_entries w
    cross join lateral (
      select s.entry_key, s.lines_entry_key from statement_entries s where s.environment = ${environment} and s.entry_key = w.entry_key offset 0
    ) m
    where e.entry_key = w.entry_key`;
  await tx`
    update import_entries e set known_key = m.entry_key, target = m.lines_entry_key, match = 'position'
    from import_lines i
    cross join lateral (
      select s.entry_key, s.lines_entry_key
      from statement_lines l
      join statement_entries s on s.environment = ${environment} and s.entry_key = l.entry_key
      where l.environment = ${environment} and l.position_key = i.position_key offset 0
    ) m
    where e.target is null and i.entry_key = e.entry_key and i.tx_index = 0`;
  // 2. The bank's reference.
  await tx`
    update import_entries e set target = m.lines_entry_key, match = 'reference'
    from (
      select w.entry_key, s.lines_entry_key
      from import_entries w
      cross join lateral (
        select s.lines_entry_key from statement_entries s
        where s.environment = ${environment} and s.account_iban = w.account_iban and s.booking_date = w.booking_date
          and s.amount_cents = w.amount_cents and s.currency = w.currency and s.direction = w.direction and s.entry_reference = w.usable_reference
        order by s.id limit 1
      ) s
      where w.target is null and w.usable_reference is not null
    ) m
    where e.entry_key = m.entry_key`;
  // 3. The day: the n-th equal entry of a wholly covered day is the n-th stored booking of that day
  // not already taken by this statement. References that both sides carry must agree (different
  // ones are the bank saying these are two bookings): entries with a reference first take stored
  // ones without (or with the same, when it was shared in its statement), then entries without
  // one take any that are left.
  await dayMatch(tx, environment, 'same reference');
  await dayMatch(tx, environment, 'stored without reference');
  await dayMatch(tx, environment, 'no reference');
  // 4. New.
  await tx`update import_entries set target = entry_key, match = 'new' where target is null`;
  const [corrected] = await tx<{ entry_index: number; file_name: string | null }[]>`
    select e.entry_index, s.file_name
    from import_entries e
    cross join lateral (
      select s.amount_cents, s.currency, s.direction, b.file_name
      from statement_entries s join bank_statements b on b.id = s.statement_id
      where s.environment = ${environment} and s.entry_key = e.known_key offset 0
    ) s
    where e.known_key is not null and (s.amount_cents, s.currency, s.direction) is distinct from (e.amount_cents, e.currency, e.direction)
    order by e.entry_index limit 1`;
  if (corrected) {
    throw new StatementFormatError(
      `statement ${sectionIndex + 1} of the file was imported before (from ${corrected.file_name ?? 'another file'}) with a different booking at entry ${corrected.entry_index + 1}: a corrected statement under the same identity is refused`,
    );
  }
}

/**
 * One step of rule 3: the statement's remaining entries with (or without) a reference, paired in
 * order with the stored entries of the same day and values that they may be (with the same
 * reference; without one; any).
 */
async function dayMatch(tx: TransactionSql, environment: ProviderEnvironment, step: 'same reference' | 'stored without reference' | 'no reference'): Promise<void> {
  const same = step === 'same reference';
  const mine = step === 'no reference' ? tx`w.entry_reference is null` : tx`w.entry_reference is not null`;
  const theirs = same ? tx`s.entry_reference = g.entry_reference` : step === 'stored without reference' ? tx`s.entry_reference is null` : tx`true`;
  const reference = (alias: string) => (same ? tx`, ${tx(alias)}.entry_reference` : tx``);
  await tx`
    with want as (
      select w.entry_key, w.account_iban, w.booking_date, w.currency, w.direction, w.amount_cents, w.entry_reference,
             row_number() over (partition by w.account_iban, w.booking_date, w.currency, w.direction, w.amount_cents${reference('w')} order by w.entry_index) as k
      from import_entries w
      where w.target is null and w.account_iban is not null and ${mine}
        and (w.whole_day or exists (
          select 1 from statement_periods p
          where p.environment = ${environment} and p.account_iban = w.account_iban and w.booking_date between p.first_whole_day and p.last_whole_day))
    ),
    groups as (select distinct account_iban, booking_date, currency, direction, amount_cents, entry_reference from want),
    avail as (
      select distinct on (s.entry_key) s.entry_key, s.id, g.account_iban, g.booking_date, g.currency, g.direction, g.amount_cents, g.entry_reference
      from groups g
      cross join lateral (
        select s.entry_key, s.id, s.entry_reference from statement_entries s
        where s.environment = ${environment} and s.account_iban = g.account_iban and s.booking_date = g.booking_date
          and s.amount_cents = g.amount_cents and s.currency = g.currency and s.direction = g.direction and s.entry_key = s.lines_entry_key
        offset 0
      ) s
      where ${theirs} and not exists (select 1 from import_entries t where t.target = s.entry_key)
    ),
    ranked as (
      select a.*, row_number() over (partition by a.account_iban, a.booking_date, a.currency, a.direction, a.amount_cents${reference('a')} order by a.id) as k
      from avail a
    )
    update import_entries e set target = r.entry_key, match = 'day'
    from want w
    join ranked r on r.account_iban = w.account_iban and r.booking_date = w.booking_date and r.currency = w.currency
      and r.direction = w.direction and r.amount_cents = w.amount_cents and r.k = w.k
      ${same ? tx`and r.entry_reference = w.entry_reference` : tx``}
    where e.entry_key = w.entry_key`;
}

async function write(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  section: StatementSection,
  days: { first: string | null; last: string | null },
): Promise<void> {
  await tx`
    insert into statement_entries (environment, entry_key, statement_id, account_iban, booking_date, currency, direction, amount_cents,
                                   entry_reference, lines_entry_key, match)
    select ${environment}::provider_environment, entry_key, ${statementId}::bigint, account_iban, booking_date, currency, direction,
           amount_cents, entry_reference, target, match
    from import_entries where match <> 'position' order by entry_index`;
  await tx`
    insert into statement_lines (environment, statement_id, line_key, position_key, entry_key, entry_index, tx_index, account_iban,
                                 booking_date, value_date, amount_cents, currency, direction, counterparty_iban,
                                 counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference)
    select ${environment}::provider_environment, ${statementId}::bigint, i.position_key, i.position_key, i.entry_key, i.entry_index, i.tx_index,
           i.account_iban, i.booking_date, i.value_date, i.amount_cents, i.currency, i.direction, i.counterparty_iban, i.counterparty_name,
           i.end_to_end_id, i.bank_reference, i.remittance, i.sepa_reference
    from import_lines i join import_entries e on e.entry_key = i.entry_key
    where e.match = 'new' order by i.n`;
  // Each statement's own period (not the file's span): payout_not_on_statement must not take the
  // days between two statements of one file as covered. A statement without both ends claims none.
  if (section.periodFrom && section.periodTo) {
    await tx`
      insert into statement_periods (statement_id, section_index, environment, period_from, period_to, account_iban, first_whole_day, last_whole_day)
      values (${statementId}, ${sectionIndex}, ${environment}, ${section.periodFrom}::timestamptz, ${section.periodTo}::timestamptz,
              ${section.accountIban}, ${days.first}::date, ${days.last}::date)`;
  }
}

/** The stored lines holding the statement's bookings (each stored entry once) add up to its booked entries, per currency and direction. */
async function verifyStored(tx: TransactionSql, environment: ProviderEnvironment, sectionIndex: number, section: StatementSection): Promise<void> {
  const sums = await tx<{ currency: string; direction: 'credit' | 'debit'; cents: string }[]>`
    select l.currency, l.direction::text as direction, sum(l.amount_cents)::text as cents
    from (select distinct target from import_entries) t
    cross join lateral (
      select l.currency, l.direction, l.amount_cents from statement_lines l where l.environment = ${environment} and l.entry_key = t.target offset 0
    ) l
    group by l.currency, l.direction`;
  const stored: Totals = new Map();
  for (const s of sums) addTotal(stored, s.currency, s.direction, BigInt(s.cents));
  const difference = totalsDifference(section.booked, stored);
  if (difference.length > 0) {
    throw new StatementFormatError(`statement ${sectionIndex + 1} of the file: the stored lines do not add up to the booked entries: ${difference.join('; ')}`);
  }
}
