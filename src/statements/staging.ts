import type { PendingQuery, Row, TransactionSql } from 'postgres';
import { entryKey, entryReference, positionKey, statementKeyPrefix, wholeDays } from './line-key.js';
import { ENTRY_COLUMNS, LINE_COLUMNS, stagedRows, type StagedColumns } from './staged-rows.js';
import type { StatementLine, StatementSection } from './types.js';

/**
 * The staging tables of one import (temporary, dropped at commit), and what goes into them. Every
 * function here only sends its statements (postgres.js runs a query once something awaits or
 * executes it, in the order they were executed): overlap.ts sends the whole of a statement's work
 * at once and awaits its results after, so the connection runs one statement's queries back to back
 * while the reader parses on.
 */

/** What the staging tables hold between statements of one import. */
export interface Staging {
  /** ANALYZE has run: once is enough, the statistics outlive TRUNCATE and describe the next statements alike */
  analyzed: boolean;
  /** import_lines holds parts of the statement being read (a CSV handed over in parts) */
  partsStaged: boolean;
}

type Days = { first: string | null; last: string | null };

// Bounded parameter arrays for a statement's parts; one statement text serves every chunk.
const CHUNK = 5000;

export async function createStaging(tx: TransactionSql): Promise<Staging> {
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
  return { analyzed: false, partsStaged: false };
}

/** Sends `query` now (in order with those sent before it); its result is awaited later. */
export function send<Q extends { execute(): unknown }>(query: Q): Q {
  query.execute();
  return query;
}

/**
 * Stages a part of a statement handed over in parts (types.ts SectionSink `more`): its section is
 * provisional, so stageEntries re-keys the staged lines in SQL once the statement has ended.
 */
export function stagePart(tx: TransactionSql, staging: Staging, section: StatementSection, days: Days, lines: readonly StatementLine[], firstN: number): PendingQuery<Row[]>[] {
  const sent: PendingQuery<Row[]>[] = [];
  if (!staging.partsStaged) sent.push(send(tx`truncate import_lines`));
  staging.partsStaged = true;
  for (let i = 0; i < lines.length; i += CHUNK) sent.push(send(stageLines(tx, section, days, lines.slice(i, i + CHUNK), firstN + i)));
  return sent;
}

/** A statement's entries and lines as the JSON documents stageEntries sends (staged-rows.ts). */
interface StagedDocuments {
  entries: string;
  lines: string;
}

/** The documents of a statement handed over whole, for the rules' way; `firstN` numbers its lines after those before it in the file. */
function stagedDocuments(section: StatementSection, lines: readonly StatementLine[], firstN: number): StagedDocuments {
  const rows = stagedRows(section, wholeDays(section), lines, firstN);
  return { entries: JSON.stringify(rows.entries), lines: JSON.stringify(rows.lines) };
}

/** The statement's entries document as rows, `e` (staged-rows.ts ENTRY_COLUMNS). */
function stagedEntriesOf(tx: TransactionSql, docs: StagedDocuments): PendingQuery<Row[]> {
  return tx`(select ${tx.unsafe(columnsOf(ENTRY_COLUMNS))} from jsonb_array_elements(${docs.entries}::text::jsonb) r) e`;
}

/** The statement's lines document as rows, `l` (staged-rows.ts LINE_COLUMNS). */
function stagedLinesOf(tx: TransactionSql, docs: StagedDocuments): PendingQuery<Row[]> {
  return tx`(select ${tx.unsafe(columnsOf(LINE_COLUMNS))} from jsonb_array_elements(${docs.lines}::text::jsonb) r) l`;
}

/** `(r->>0)::text as entry_key, ...`: each element of a staged row as its column (names and types are the constants of staged-rows.ts). */
const columnsOf = (columns: StagedColumns): string => columns.map(([name, type], i) => `(r->>${i})::${type} as ${name}`).join(', ');

/**
 * Stages the statement's entries, and returns the source its new lines are stored from: the
 * statement's lines as one JSON document, or, when its parts were staged before (stagePart),
 * import_lines, re-keyed now that the statement's identity is known.
 */
export function stageEntries(
  tx: TransactionSql,
  staging: Staging,
  section: StatementSection,
  days: Days,
  lines: readonly StatementLine[],
  firstN: number,
): { sent: PendingQuery<Row[]>[]; source: PendingQuery<Row[]> } {
  const sent = [send(tx`truncate import_entries`)];
  let source;
  if (staging.partsStaged) {
    sent.push(...stagePart(tx, staging, section, days, lines, firstN));
    sent.push(send(rekeyStaged(tx, section, days)), send(collectEntries(tx)));
    source = tx`import_lines l`;
    staging.partsStaged = false;
  } else {
    const docs = stagedDocuments(section, lines, firstN);
    sent.push(
      send(tx`
        insert into import_entries (entry_key, entry_index, account_iban, booking_date, currency, direction, amount_cents, entry_reference,
                                    usable_reference, whole_day, lines)
        select e.entry_key, e.entry_index, e.account_iban, e.booking_date, e.currency, e.direction, e.amount_cents, e.entry_reference,
               e.usable_reference, e.whole_day, e.lines
        from ${stagedEntriesOf(tx, docs)}`),
    );
    source = stagedLinesOf(tx, docs);
  }
  // Temporary tables have no statistics: without them the planner may hash the whole ledger to
  // match a few thousand staged rows (1 s a statement at 1,000,000 stored lines). Statistics
  // outlive TRUNCATE, so the first statement's serve the file's others (analyzed for each, 44 ms a
  // statement of 4,000 entries: 1.1 s of the 16 s Postgres spent on a file of 100,000).
  if (!staging.analyzed) {
    sent.push(send(tx`analyze import_lines, import_entries`));
    staging.analyzed = true;
  }
  return { sent, source };
}

/** positionKey and entryKey (line-key.ts: the statement's prefix, the entry's and the transaction's index) and the whole days, for lines staged provisionally. */
function rekeyStaged(tx: TransactionSql, section: StatementSection, days: Days): PendingQuery<Row[]> {
  const prefix = statementKeyPrefix(section);
  return tx`
    update import_lines set
      position_key = ${prefix}::text || ':' || lpad(to_hex(entry_index), 8, '0') || ':' || lpad(to_hex(tx_index), 8, '0'),
      entry_key = ${prefix}::text || ':' || lpad(to_hex(entry_index), 8, '0'),
      whole_day = coalesce(booking_date between ${days.first}::date and ${days.last}::date, false)`;
}

function stageLines(tx: TransactionSql, section: StatementSection, days: Days, lines: StatementLine[], from: number): PendingQuery<Row[]> {
  const col = <T>(f: (l: StatementLine, i: number) => T) => lines.map((l, i) => f(l, i));
  const whole = (l: StatementLine) => days.first !== null && days.last !== null && l.bookingDate >= days.first && l.bookingDate <= days.last;
  const prefix = statementKeyPrefix(section);
  return tx`
    insert into import_lines (n, position_key, entry_key, entry_reference, whole_day, entry_index, tx_index, account_iban, booking_date,
                              value_date, amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id,
                              bank_reference, remittance, sepa_reference)
    select u.n::integer, u.position_key, u.entry_key, u.entry_reference, u.whole_day::boolean, u.entry_index::integer, u.tx_index::integer,
           u.account_iban, u.booking_date::date, u.value_date::date, u.amount_cents::bigint, u.currency,
           u.direction::statement_direction, u.counterparty_iban, u.counterparty_name, u.end_to_end_id, u.bank_reference,
           u.remittance, u.sepa_reference
    from unnest(${col((_, i) => String(from + i))}::text[], ${col((l) => positionKey(prefix, l))}::text[], ${col((l) => entryKey(prefix, l))}::text[],
                ${col(entryReference)}::text[], ${col((l) => String(whole(l)))}::text[],
                ${col((l) => String(l.entryIndex))}::text[], ${col((l) => String(l.txIndex))}::text[],
                ${col((l) => l.accountIban)}::text[], ${col((l) => l.bookingDate)}::text[], ${col((l) => l.valueDate)}::text[],
                ${col((l) => l.amountCents.toString())}::text[], ${col((l) => l.currency)}::text[], ${col((l) => l.direction)}::text[],
                ${col((l) => l.counterpartyIban)}::text[], ${col((l) => l.counterpartyName)}::text[], ${col((l) => l.endToEndId)}::text[],
                ${col((l) => l.bankReference)}::text[], ${col((l) => l.remittance)}::text[], ${col((l) => l.sepaReference)}::text[])
      as u(n, position_key, entry_key, entry_reference, whole_day, entry_index, tx_index, account_iban, booking_date, value_date,
           amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference)`;
}

/** The statement's entries from its staged lines (as staged-rows.ts builds them from lines in memory). */
function collectEntries(tx: TransactionSql): PendingQuery<Row[]> {
  return tx`
    insert into import_entries (entry_key, entry_index, account_iban, booking_date, currency, direction, amount_cents, entry_reference,
                                usable_reference, whole_day, lines)
    select g.entry_key, g.entry_index, g.account_iban, g.booking_date, g.currency, g.direction, g.amount_cents, g.entry_reference,
           case when count(*) over (partition by g.account_iban, g.booking_date, g.currency, g.direction, g.amount_cents, g.entry_reference) = 1
                then g.entry_reference end,
           g.whole_day, g.lines
    from (
      select entry_key, min(entry_index) as entry_index, min(account_iban) as account_iban, min(booking_date) as booking_date,
             min(currency) as currency, min(direction::text)::statement_direction as direction, sum(amount_cents) as amount_cents,
             case when upper(min(entry_reference)) <> 'NONREF' then min(entry_reference) end as entry_reference, bool_and(whole_day) as whole_day,
             count(*)::int as lines
      from import_lines group by entry_key
    ) g`;
}
