import type { PendingQuery, Row, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { statementKeyPrefix, wholeDays } from './line-key.js';
import { copyRows } from '../db/copy.js';
import { consecutiveWith, writeBalances } from './consecutive.js';
import { FRESH_ENTRY_COLUMNS, FRESH_LINE_COLUMNS, freshRows, linesNow, type FreshRows, type LinesWhenAsked } from './staged-rows.js';
import { send, stageEntries, type Staging } from './staging.js';
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
 * Rules 2 and 3 pass over the stored entries of a statement consecutive with this one, where one
 * opens with the balance the other closes with (consecutive.ts): a bank's second MT940 statement
 * of a day covers the day wholly as the first does, but its balances say it holds only the
 * bookings after the first's.
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

/**
 * Stages, matches and stores one statement of a file (the statements before it in the file are
 * already stored, so overlaps inside one file are found too), and checks its stored lines. A
 * statement of new days (storeIfNothingStored) is tested, then copied: nothing else may use the
 * connection until it is stored. Otherwise every query of the rules is sent before the first result
 * is awaited (staging.ts `send`), and each depends on no result in JavaScript: the connection runs
 * them back to back. `fresh` is the statement's rows as staged-rows.ts freshRows builds them, when
 * the caller built them ahead.
 */
export async function storeStatement(
  tx: TransactionSql,
  staging: Staging,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  section: StatementSection,
  statementLines: LinesWhenAsked,
  firstN: number,
  fresh?: FreshRows,
  pace?: CopyPace,
): Promise<SectionCounts> {
  const days = wholeDays(section);
  let read: readonly StatementLine[] | undefined;
  const lines = () => (read ??= linesNow(statementLines));
  if (!staging.partsStaged) {
    fresh ??= freshRows(section, lines(), environment, statementId);
    const stored = await storeIfNothingStored(tx, environment, statementId, sectionIndex, section, days, fresh, pace);
    if (stored) {
      verifyStored(sectionIndex, section, stored.sums);
      return { new: stored.lines, known: 0, overlap: 0 };
    }
  }
  const { sent, source } = stageEntries(tx, staging, section, days, lines(), firstN);
  sent.push(...matchEntries(tx, environment, statementId, section));
  if (section.formerIdentity !== undefined) sent.push(...matchFormer(tx, environment, statementId, { ...section, identity: section.formerIdentity }, source));
  const corrected = send(correctedEntry(tx, environment));
  const counts = send(writeEntries(tx, environment, statementId));
  if (section.periodFrom && section.periodTo) sent.push(send(writePeriod(tx, environment, statementId, sectionIndex, section, days)));
  const balances = writeBalances(tx, environment, statementId, sectionIndex, section);
  if (balances) sent.push(send(balances));
  const sums = send(writeLines(tx, environment, statementId, source));
  for (const query of sent) await query;
  const [c] = await corrected;
  if (c) {
    throw new StatementFormatError(
      `statement ${sectionIndex + 1} of the file was imported before (from ${c.file_name ?? 'another file'}) with a different booking at entry ${c.entry_index + 1}: a corrected statement under the same identity is refused`,
    );
  }
  const byMatch = await counts;
  verifyStored(sectionIndex, section, await sums);
  const of = (...m: string[]) => byMatch.filter((r) => m.includes(r.match)).reduce((n, r) => n + r.lines, 0);
  return { new: of('new'), known: of('position'), overlap: of('reference', 'day') };
}

type Sums = { currency: string; direction: 'credit' | 'debit'; cents: string }[];

/**
 * Told, after each chunk of a paced copy, how long Postgres took to store it (ms); resolves when the
 * next chunk may go (store-pipeline.ts: an import beside the receiver).
 */
export type CopyPace = (busyMs: number) => Promise<void>;

/**
 * COPY of the chunks, in one COPY, or with `pace` one COPY per chunk (copyChunks: 1,000 rows),
 * each awaited before the pace decides when the next goes: the rows written into one COPY sit in
 * the socket's buffers, so only a finished COPY says how long Postgres worked on them.
 */
async function copyPaced(tx: TransactionSql, table: string, columns: readonly string[], chunks: readonly Buffer[], pace: CopyPace | undefined): Promise<void> {
  if (!pace) return copyRows(tx, table, columns, chunks);
  for (const chunk of chunks) {
    const started = performance.now();
    await copyRows(tx, table, columns, [chunk]);
    await pace(performance.now() - started);
  }
}

/**
 * A statement none of whose entries rules 1-3 can pair with a stored one is stored whole, without
 * staging: no entry of its identity is stored (its keys share a prefix, line-key.ts, so one index
 * range says so), nor, while files of the older keys or of before migration 0013 exist, an entry or
 * line at its positions in those forms, and no stored entry shares an account and booking day with
 * one of its entries (rules 2 and 3 pair only those). Its entries are then all new, as the rules
 * would find them, and its entries and lines are copied into the ledger as they are (db/copy.ts),
 * with its period; the lines then stored at its positions are summed for the check. This is a
 * statement of days not imported before, the usual one: 4 of every 5 statements' work was staging
 * and matching that found nothing (bench/README.md, statements). Otherwise nothing is written
 * (null), and the statement takes the rules' way. Imports of an environment take turns (import.ts),
 * so nothing is stored between the test and the copy.
 */
async function storeIfNothingStored(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  section: StatementSection,
  days: { first: string | null; last: string | null },
  fresh: FreshRows,
  pace: CopyPace | undefined,
): Promise<{ lines: number; sums: Sums } | null> {
  const prefix = statementKeyPrefix(section);
  const former = section.formerIdentity === undefined ? null : statementKeyPrefix({ ...section, identity: section.formerIdentity });
  const theirDays = tx`select account_iban, booking_date from unnest(${fresh.days.accounts}::text[], ${fresh.days.dates}::text[]::date[]) as d(account_iban, booking_date)`;
  const [test] = await tx<{ ok: boolean }[]>`
    with e as (select entry_index from unnest(${fresh.entryIndexes.map(String)}::text[]::int[]) as w(entry_index))
    select not exists (
             select 1 from statement_entries s
             where s.environment = ${environment} and s.entry_key between ${`${prefix}:00000000`} and ${`${prefix}:ffffffff`})
       and not ${storedOnTheirDays(tx, environment, theirDays)}
       -- Entries stored under its former identity (types.ts formerIdentity): rule 1 decides whether they are its own.
       and not ${former === null ? tx`false` : tx`exists (
             select 1 from statement_entries s
             where s.environment = ${environment} and s.entry_key between ${`${former}:00000000`} and ${`${former}:ffffffff`})`}
       and not ${section.formerIdentity === undefined ? tx`false` : tx`(${olderKeyFiles(tx, environment, statementId)}
                and exists (
                  select 1 from e w
                  cross join lateral (
                    select 1 from statement_entries s where s.environment = ${environment} and s.entry_key = ${legacyKey(tx, 'entry', section.formerIdentity)} offset 0
                  ) s))`}
       -- Each a probe per entry ('offset 0' as in matchEntries), and only while such files exist.
       and not (${olderKeyFiles(tx, environment, statementId)}
                and exists (
                  select 1 from e w
                  cross join lateral (
                    select 1 from statement_entries s where s.environment = ${environment} and s.entry_key = ${legacyKey(tx, 'entry', section.identity)} offset 0
                  ) s))
       and not (${filesBefore0013(tx, environment, statementId)}
                and exists (
                  select 1 from e w
                  cross join lateral (
                    select 1 from statement_lines l where l.environment = ${environment} and l.position_key = ${legacyKey(tx, 'position', section.identity)} offset 0
                  ) l))
         as ok`;
  if (!test!.ok) return null;
  await copyPaced(tx, 'statement_entries', FRESH_ENTRY_COLUMNS, fresh.entries, pace);
  await copyPaced(tx, 'statement_lines', FRESH_LINE_COLUMNS, fresh.lines, pace);
  const period = section.periodFrom && section.periodTo ? send(writePeriod(tx, environment, statementId, sectionIndex, section, days)) : null;
  const balances = writeBalances(tx, environment, statementId, sectionIndex, section);
  if (balances) send(balances);
  const sums = await tx<(Sums[number] & { lines: number })[]>`
    select currency, direction::text as direction, sum(amount_cents)::text as cents, count(*)::int as lines
    from statement_lines
    where environment = ${environment} and position_key between ${`${prefix}:00000000:00000000`} and ${`${prefix}:ffffffff:ffffffff`}
    group by currency, direction`;
  await period;
  await balances;
  return { lines: sums.reduce((n, s) => n + s.lines, 0), sums };
}

/**
 * Rules 1-3 of the header, in that order; each sees only the entries the ones before left. Rule 4,
 * new, is every entry left without a target (writeEntries, writeLines).
 */
function matchEntries(tx: TransactionSql, environment: ProviderEnvironment, statementId: number, section: StatementSection): PendingQuery<Row[]>[] {
  const identity = section.identity;
  const consecutive = consecutiveWith(tx, environment, section);
  // Rules 2 and 3 pair an entry only with a stored entry of its account and booking day. A file of
  // new days has none: one probe per account and day says so (an InitPlan, run once per query),
  // instead of each rule's probes per entry (four passes over the statement's entries: 2.0 s of the
  // 16.3 s Postgres spent on the benchmark's 100,000-entry CAMT.053).
  const candidates = storedOnTheirDays(tx, environment, tx`select account_iban, booking_date from import_entries where target is null`);
  return [
    // 1. Position: this statement's entry, by its key (line-key.ts), by the older form of it for
    // statements stored before that form, or (lines stored between migrations 0009 and 0013) by
    // its first line's position in that older form.
    // Each staged row probes the ledger's indexes: a lateral subquery with 'offset 0' is run per row,
    // never flattened into a join. The ledger's rows written in this transaction have no statistics
    // (autovacuum cannot see them), and with a flattened join the planner took statement_entries for
    // one row and scanned it once per staged row: 31 s for a statement of 4,000 entries at 8,000 stored.
    send(tx`
      update import_entries e set known_key = m.entry_key, target = m.lines_entry_key, match = 'position'
      from import_entries w
      cross join lateral (
        select s.entry_key, s.lines_entry_key from statement_entries s where s.environment = ${environment} and s.entry_key = w.entry_key offset 0
      ) m
      where e.entry_key = w.entry_key`),
    send(tx`
      update import_entries e set known_key = m.entry_key, target = m.lines_entry_key, match = 'position'
      from import_entries w
      cross join lateral (
        select s.entry_key, s.lines_entry_key from statement_entries s
        where s.environment = ${environment} and s.entry_key = ${legacyKey(tx, 'entry', identity)} offset 0
      ) m
      where e.target is null and w.entry_key = e.entry_key
        -- Only statements stored before today's key form have such keys: without one, no probes.
        and ${olderKeyFiles(tx, environment, statementId)}`),
    send(tx`
      update import_entries e set known_key = m.entry_key, target = m.lines_entry_key, match = 'position'
      from import_entries w
      cross join lateral (
        select s.entry_key, s.lines_entry_key
        from statement_lines l
        join statement_entries s on s.environment = ${environment} and s.entry_key = l.entry_key
        where l.environment = ${environment} and l.position_key = ${legacyKey(tx, 'position', identity)} offset 0
      ) m
      where e.target is null and w.entry_key = e.entry_key
        -- Only a file imported before migration 0013 can hold such lines: without one, no probes.
        and ${filesBefore0013(tx, environment, statementId)}`),
    // 2. The bank's reference.
    send(tx`
      update import_entries e set target = m.lines_entry_key, match = 'reference'
      from (
        select w.entry_key, s.lines_entry_key
        from import_entries w
        cross join lateral (
          select s.lines_entry_key from statement_entries s
          where s.environment = ${environment} and s.account_iban = w.account_iban and s.booking_date = w.booking_date
            and s.amount_cents = w.amount_cents and s.currency = w.currency and s.direction = w.direction and s.entry_reference = w.usable_reference
            -- Neither the stored entry's statement nor the one holding its booking's lines may be
            -- consecutive with this one: both hold that booking (consecutive.ts).
            and not ${consecutive(tx`s.entry_key`)} and not ${consecutive(tx`s.lines_entry_key`)}
          order by s.id limit 1
        ) s
        where w.target is null and w.usable_reference is not null and ${candidates}
      ) m
      where e.entry_key = m.entry_key`),
    // 3. The day: the n-th equal entry of a wholly covered day is the n-th stored booking of that day
    // not already taken by this statement. References that both sides carry must agree (different
    // ones are the bank saying these are two bookings): entries with a reference first take stored
    // ones without (or with the same, when it was shared in its statement), then entries without
    // one take any that are left.
    send(dayMatch(tx, environment, 'same reference', candidates, consecutive)),
    send(dayMatch(tx, environment, 'stored without reference', candidates, consecutive)),
    send(dayMatch(tx, environment, 'no reference', candidates, consecutive)),
  ];
}

/**
 * Rule 1 by the statement's former identity (types.ts formerIdentity: a CSV naming no account,
 * before its lines' texts joined its identity): the entry stored at the same index under it, in
 * today's key form or the older one, is this statement's only where every one of its lines has a
 * stored line at the same place with the same counterparty and remittance. An entry of another
 * account's export that merely shares the day and amount had that identity as well (the defect the
 * texts now tell apart), and stays new. Lines stored before migration 0013 (no entries) are not
 * probed: a re-export of such a file is stored again, a shortcoming no worse than storing nothing.
 */
function matchFormer(tx: TransactionSql, environment: ProviderEnvironment, statementId: number, formerSection: StatementSection, source: PendingQuery<Row[]>): PendingQuery<Row[]>[] {
  const former = formerSection.identity;
  const prefix = statementKeyPrefix(formerSection);
  const probe = (entryKey: PendingQuery<Row[]>, lineKey: PendingQuery<Row[]>, only: PendingQuery<Row[]>) => send(tx`
    update import_entries e set known_key = m.entry_key, target = m.lines_entry_key, match = 'position'
    from import_entries w
    cross join lateral (
      select s.entry_key, s.lines_entry_key from statement_entries s where s.environment = ${environment} and s.entry_key = ${entryKey} offset 0
    ) m
    where e.target is null and w.entry_key = e.entry_key and ${only}
      and not exists (
        select 1 from ${source}
        where l.entry_key = w.entry_key and not exists (
          select 1 from statement_lines sl
          where sl.environment = ${environment} and sl.position_key = ${lineKey}
            and sl.counterparty_name is not distinct from l.counterparty_name and sl.remittance is not distinct from l.remittance))`);
  return [
    probe(tx`${prefix}::text || ':' || lpad(to_hex(w.entry_index), 8, '0')`, tx`m.entry_key || ':' || lpad(to_hex(l.tx_index), 8, '0')`, tx`true`),
    probe(
      legacyKey(tx, 'entry', former),
      tx`encode(sha256(convert_to(concat_ws(E'\n', 'position', ${former}::text, l.entry_index::text, l.tx_index::text), 'UTF8')), 'hex')`,
      olderKeyFiles(tx, environment, statementId),
    ),
  ];
}

/**
 * The key the staged entry `w` (or its line of transaction 0) had before line-key.ts's form: the
 * sha256 of 'entry' (or 'position'), the statement's identity, the entry's index (and 0), joined by
 * line feeds.
 */
function legacyKey(tx: TransactionSql, kind: 'entry' | 'position', identity: string): PendingQuery<Row[]> {
  const parts = kind === 'entry' ? tx`'entry', ${identity}::text, w.entry_index::text` : tx`'position', ${identity}::text, w.entry_index::text, '0'`;
  return tx`encode(sha256(convert_to(concat_ws(E'\n', ${parts}), 'UTF8')), 'hex')`;
}

/** The first entry found by its position whose stored booking differs: a corrected statement under an old identity. */
function correctedEntry(tx: TransactionSql, environment: ProviderEnvironment): PendingQuery<{ entry_index: number; file_name: string | null }[]> {
  return tx`
    select e.entry_index, s.file_name
    from import_entries e
    cross join lateral (
      select s.amount_cents, s.currency, s.direction, b.file_name
      from statement_entries s join bank_statements b on b.id = s.statement_id
      where s.environment = ${environment} and s.entry_key = e.known_key offset 0
    ) s
    where e.known_key is not null and (s.amount_cents, s.currency, s.direction) is distinct from (e.amount_cents, e.currency, e.direction)
    order by e.entry_index limit 1`;
}

/**
 * One step of rule 3: the statement's remaining entries with (or without) a reference, paired in
 * order with the stored entries of the same day and values that they may be (with the same
 * reference; without one; any), but those of a statement consecutive with it.
 */
function dayMatch(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  step: 'same reference' | 'stored without reference' | 'no reference',
  candidates: PendingQuery<Row[]>,
  consecutive: (entryKey: PendingQuery<Row[]>) => PendingQuery<Row[]>,
): PendingQuery<Row[]> {
  const same = step === 'same reference';
  const mine = step === 'no reference' ? tx`w.entry_reference is null` : tx`w.entry_reference is not null`;
  const theirs = same ? tx`s.entry_reference = g.entry_reference` : step === 'stored without reference' ? tx`s.entry_reference is null` : tx`true`;
  const reference = (alias: string) => (same ? tx`, ${tx(alias)}.entry_reference` : tx``);
  return tx`
    with want as (
      select w.entry_key, w.account_iban, w.booking_date, w.currency, w.direction, w.amount_cents, w.entry_reference,
             row_number() over (partition by w.account_iban, w.booking_date, w.currency, w.direction, w.amount_cents${reference('w')} order by w.entry_index) as k
      from import_entries w
      where w.target is null and w.account_iban is not null and ${mine} and ${candidates}
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
      where ${theirs} and not exists (select 1 from import_entries t where t.target = s.entry_key) and not ${consecutive(tx`s.entry_key`)}
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

/**
 * Records every entry of the statement but those its identity had already brought (rule 1): linked
 * to the stored entry that holds its booking, its own when new. Returns the statement's lines by match.
 */
function writeEntries(tx: TransactionSql, environment: ProviderEnvironment, statementId: number): PendingQuery<{ match: string; lines: number }[]> {
  return tx`
    with stored as (
      insert into statement_entries (environment, entry_key, statement_id, account_iban, booking_date, currency, direction, amount_cents,
                                     entry_reference, lines_entry_key, match)
      select ${environment}::provider_environment, entry_key, ${statementId}::bigint, account_iban, booking_date, currency, direction,
             amount_cents, entry_reference, coalesce(target, entry_key), coalesce(match, 'new')
      from import_entries where match is distinct from 'position' order by entry_index
    )
    select coalesce(match, 'new') as match, sum(lines)::int as lines from import_entries group by 1`;
}

/**
 * Each statement's own period (not the file's span): payout_not_on_statement must not take the
 * days between two statements of one file as covered. A statement without both ends claims none.
 * An insert a caller may end with a where clause.
 */
function writePeriod(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  section: StatementSection,
  days: { first: string | null; last: string | null },
): PendingQuery<Row[]> {
  return tx`
    insert into statement_periods (statement_id, section_index, environment, period_from, period_to, account_iban, first_whole_day, last_whole_day)
    select ${statementId}, ${sectionIndex}, ${environment}, ${section.periodFrom}::timestamptz, ${section.periodTo}::timestamptz,
           ${section.accountIban}, ${days.first}::date, ${days.last}::date`;
}

/** Stores staged lines `l` of `source` (staging.ts stagedLinesOf, or import_lines) as the statement's: a caller joins, filters and orders after it. */
function insertLines(tx: TransactionSql, environment: ProviderEnvironment, statementId: number, source: PendingQuery<Row[]>): PendingQuery<Row[]> {
  return tx`
    insert into statement_lines (environment, statement_id, line_key, position_key, entry_key, entry_index, tx_index, account_iban,
                                 booking_date, value_date, amount_cents, currency, direction, counterparty_iban,
                                 counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference)
    select ${environment}::provider_environment, ${statementId}::bigint, l.position_key, l.position_key, l.entry_key, l.entry_index, l.tx_index,
           l.account_iban, l.booking_date, l.value_date, l.amount_cents, l.currency, l.direction, l.counterparty_iban, l.counterparty_name,
           l.end_to_end_id, l.bank_reference, l.remittance, l.sepa_reference
    from ${source}`;
}

/**
 * Some stored entry of the environment has an account and booking day of `rows` (account_iban,
 * booking_date): rules 2 and 3 pair an entry only with such a one. One probe per account and day.
 */
function storedOnTheirDays(tx: TransactionSql, environment: ProviderEnvironment, rows: PendingQuery<Row[]>): PendingQuery<Row[]> {
  return tx`
    exists (
      select 1
      from (select distinct account_iban, booking_date from (${rows}) r where account_iban is not null) d
      cross join lateral (
        select 1 from statement_entries s
        where s.environment = ${environment} and s.account_iban = d.account_iban and s.booking_date = d.booking_date limit 1
      ) s
    )`;
}

/** A file other than this one was stored with the older key form (line-key.ts; key_format null). */
function olderKeyFiles(tx: TransactionSql, environment: ProviderEnvironment, statementId: number): PendingQuery<Row[]> {
  return tx`exists (select 1 from bank_statements b where b.environment = ${environment} and b.key_format is null and b.id <> ${statementId})`;
}

/**
 * A file other than this one was imported before migration 0013 (lines_new null: it counted no new
 * lines; the file being imported counts its own at the end), so it may hold lines without entries.
 */
function filesBefore0013(tx: TransactionSql, environment: ProviderEnvironment, statementId: number): PendingQuery<Row[]> {
  return tx`exists (select 1 from bank_statements b where b.environment = ${environment} and b.lines_new is null and b.id <> ${statementId})`;
}

/**
 * Stores the lines of the statement's new entries from `source` (staging.ts stageEntries), and sums
 * the stored lines that hold its bookings, each stored entry once: the lines just stored, as the
 * insert returns them, and those of the entries it found stored.
 */
function writeLines(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  source: PendingQuery<Row[]>,
): PendingQuery<Sums> {
  return tx`
    with stored as (
      ${insertLines(tx, environment, statementId, source)} join import_entries e on e.entry_key = l.entry_key
      where e.target is null order by l.n
      returning currency, direction, amount_cents
    ),
    -- An entry's lines by its key: for keys of format 2 a range of statement_lines_position_uq (the
    -- entry key starts the position key, line-key.ts), else statement_lines_older_entry_idx, whose
    -- predicate the second branch repeats; the two branches' predicates exclude each other.
    held as (
      select l.currency, l.direction, l.amount_cents
      from (select distinct target from import_entries where target is not null) t
      cross join lateral (
        select l.currency, l.direction, l.amount_cents from statement_lines l
        where l.environment = ${environment} and l.position_key between t.target || ':00000000' and t.target || ':ffffffff'
          and l.entry_key = t.target and l.entry_key = left(l.position_key, 41)
        union all
        select l.currency, l.direction, l.amount_cents from statement_lines l
        where l.environment = ${environment} and l.entry_key = t.target and l.entry_key <> left(l.position_key, 41)
        offset 0
      ) l
    )
    select currency, direction::text as direction, sum(amount_cents)::text as cents
    from (select currency, direction, amount_cents from stored union all select currency, direction, amount_cents from held) l
    group by currency, direction`;
}

/** The stored lines holding the statement's bookings add up to its booked entries, per currency and direction. */
function verifyStored(sectionIndex: number, section: StatementSection, sums: Readonly<Sums>): void {
  const stored: Totals = new Map();
  for (const s of sums) addTotal(stored, s.currency, s.direction, BigInt(s.cents));
  const difference = totalsDifference(section.booked, stored);
  if (difference.length > 0) {
    throw new StatementFormatError(`statement ${sectionIndex + 1} of the file: the stored lines do not add up to the booked entries: ${difference.join('; ')}`);
  }
}
