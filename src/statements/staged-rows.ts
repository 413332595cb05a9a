import { copyChunks, copyField } from '../db/copy.js';
import { entryKey, entryReference, positionKey, statementKeyPrefix, wholeDays } from './line-key.js';
import type { StatementLine, StatementSection, Totals } from './types.js';

/**
 * The rows a statement is staged as, built in JavaScript and sent as one JSON document per table,
 * each row an array in the order of its columns below (staging.ts reads them by position): its
 * entries, with what the overlap rule asks of them, and its lines. Arrays read as jsonb, each field
 * by its index: Postgres inserted 4,000 lines of 17 columns in 8.6 µs a line from jsonb arrays, 15.0
 * from objects through json_to_recordset and 22.4 from json arrays (each `->>` parses the element
 * again); medians of 7 rounds, planning and execution (EXPLAIN ANALYZE). JSON.stringify writes
 * arrays in 0.6-0.9 µs a line against 5-9 for objects. Pure. The entries are what overlap.ts's
 * SQL grouping of staged lines yields (`collectEntries`, kept for statements handed over in parts):
 * a reader writes an entry's lines one after the other, and they share its account, date,
 * currency, direction and reference (camt053.ts splits a batch only into transactions of the
 * entry's currency and direction; the other readers write one line per entry), so the entry takes
 * its first line's values and the sum of their amounts.
 */

/** A staged row's columns: name and SQL type, in the order of its array. */
export type StagedColumns = readonly (readonly [name: string, type: string])[];

export const ENTRY_COLUMNS = [
  ['entry_key', 'text'],
  ['entry_index', 'integer'],
  ['account_iban', 'text'],
  ['booking_date', 'date'],
  ['currency', 'text'],
  ['direction', 'statement_direction'],
  // decimal text: a JSON number would lose cents past 2^53
  ['amount_cents', 'bigint'],
  ['entry_reference', 'text'],
  // the entry reference when no other entry of the statement has it with the same values (rule 2 of overlap.ts)
  ['usable_reference', 'text'],
  ['whole_day', 'boolean'],
  ['lines', 'integer'],
] as const satisfies StagedColumns;

export const LINE_COLUMNS = [
  ['n', 'integer'],
  ['position_key', 'text'],
  ['entry_key', 'text'],
  ['entry_index', 'integer'],
  ['tx_index', 'integer'],
  ['account_iban', 'text'],
  ['booking_date', 'date'],
  ['value_date', 'date'],
  ['amount_cents', 'bigint'],
  ['currency', 'text'],
  ['direction', 'statement_direction'],
  ['counterparty_iban', 'text'],
  ['counterparty_name', 'text'],
  ['end_to_end_id', 'text'],
  ['bank_reference', 'text'],
  ['remittance', 'text'],
  ['sepa_reference', 'text'],
] as const satisfies StagedColumns;

export type StagedEntry = [
  entryKey: string, entryIndex: number, accountIban: string | null, bookingDate: string, currency: string, direction: string,
  amountCents: string, entryReference: string | null, usableReference: string | null, wholeDay: boolean, lines: number,
];

export type StagedLine = [
  n: number, positionKey: string, entryKey: string, entryIndex: number, txIndex: number, accountIban: string | null, bookingDate: string,
  valueDate: string | null, amountCents: string, currency: string, direction: string, counterpartyIban: string | null,
  counterpartyName: string | null, endToEndId: string | null, bankReference: string | null, remittance: string | null, sepaReference: string | null,
];

// 'NONREF' (any case) is the bank saying there is no reference. Only ASCII letters upper-case to
// these six, so an ASCII case-insensitive test is Postgres's upper(ref) = 'NONREF'.
const NONREF = /^nonref$/i;

interface OpenEntry {
  key: string;
  first: StatementLine;
  reference: string | null;
  cents: bigint;
  lines: number;
  wholeDay: boolean;
}

/**
 * The statement's entries from its lines, in the order of their first lines: each takes its first
 * line's values, the sum of its lines' amounts, and its reference (NONREF is none); `wholeDay`
 * says whether every line's booking day lies in `days`.
 */
function entriesOf(prefix: string, lines: readonly StatementLine[], days: { first: string | null; last: string | null }): OpenEntry[] {
  const open: OpenEntry[] = [];
  const byIndex = new Map<number, OpenEntry>();
  let last: OpenEntry | undefined;
  for (const l of lines) {
    let e = last !== undefined && last.first.entryIndex === l.entryIndex ? last : byIndex.get(l.entryIndex);
    if (!e) {
      const reference = entryReference(l);
      e = { key: entryKey(prefix, l), first: l, reference: reference !== null && !NONREF.test(reference) ? reference : null, cents: 0n, lines: 0, wholeDay: true };
      byIndex.set(l.entryIndex, e);
      open.push(e);
    }
    last = e;
    e.cents += l.amountCents;
    e.lines += 1;
    e.wholeDay &&= days.first !== null && days.last !== null && l.bookingDate >= days.first && l.bookingDate <= days.last;
  }
  return open;
}

/** A statement's entries and lines as staged rows; `from` numbers its lines after those before it in the file. */
export function stagedRows(
  section: StatementSection,
  days: { first: string | null; last: string | null },
  lines: readonly StatementLine[],
  from: number,
): { entries: StagedEntry[]; lines: StagedLine[] } {
  const prefix = statementKeyPrefix(section);
  const open = entriesOf(prefix, lines, days);
  const staged = lines.map((l, i): StagedLine => [
    from + i, positionKey(prefix, l), entryKey(prefix, l), l.entryIndex, l.txIndex, l.accountIban, l.bookingDate, l.valueDate, l.amountCents.toString(),
    l.currency, l.direction, l.counterpartyIban, l.counterpartyName, l.endToEndId, l.bankReference, l.remittance, l.sepaReference,
  ]);
  // Rule 2 trusts a reference only when it names one entry of these values in the statement.
  // Each entry's values serialised once, for the count and for the test (4,000 lines staged in 24 ms
  // against 28.5 ms serialising them twice; medians of 60, scratch micro-benchmark).
  const values = open.map((e) => (e.reference === null ? null : JSON.stringify([e.first.accountIban, e.first.bookingDate, e.first.currency, e.first.direction, e.cents.toString(), e.reference])));
  const sharing = new Map<string, number>();
  for (const v of values) if (v !== null) sharing.set(v, (sharing.get(v) ?? 0) + 1);
  const entries = open.map((e, i): StagedEntry => [
    e.key, e.first.entryIndex, e.first.accountIban, e.first.bookingDate, e.first.currency, e.first.direction, e.cents.toString(), e.reference,
    values[i] != null && sharing.get(values[i]!) === 1 ? e.reference : null, e.wholeDay, e.lines,
  ]);
  return { entries, lines: staged };
}

/** statement_entries' columns as a statement stored whole copies them (overlap.ts), in the order of freshRows' fields. */
export const FRESH_ENTRY_COLUMNS = [
  'environment', 'entry_key', 'statement_id', 'account_iban', 'booking_date', 'currency', 'direction', 'amount_cents', 'entry_reference',
  'lines_entry_key', 'match',
] as const;

/** statement_lines' columns likewise (line_key is the position key, as for every line stored since migration 0013). */
export const FRESH_LINE_COLUMNS = [
  'environment', 'statement_id', 'line_key', 'position_key', 'entry_key', 'entry_index', 'tx_index', 'account_iban', 'booking_date',
  'value_date', 'amount_cents', 'currency', 'direction', 'counterparty_iban', 'counterparty_name', 'end_to_end_id', 'bank_reference',
  'remittance', 'sepa_reference',
] as const;

/**
 * A statement as it is stored when none of its entries can be a booking already stored (overlap.ts
 * storeIfNothingStored): its entries and lines as COPY rows of statement `statementId` (db/copy.ts),
 * every entry new and holding its own lines, and what the test for that reads of it: the account
 * and booking day of its entries (each pair once) and their indexes.
 */
export interface FreshRows {
  entries: Buffer[];
  lines: Buffer[];
  days: { accounts: string[]; dates: string[] };
  entryIndexes: number[];
}

/**
 * A statement handed over whole with its rows built ahead (read-thread.ts), and what the import
 * needs of its lines without reading them: their count and totals. `lines()` reads them, only for a
 * statement that cannot be copied whole (overlap.ts storeStatement); until then the main thread
 * holds their text as bytes outside its heap, and its heap stays flat (bench/README.md, statements).
 */
export interface BuiltStatement {
  fresh: FreshRows;
  count: number;
  totals: Totals;
  lines: () => StatementLine[];
}

/** A statement's lines, or (a BuiltStatement's) the way to read them when asked. */
export type LinesWhenAsked = readonly StatementLine[] | (() => readonly StatementLine[]);

/** The lines, read now if they were left to be read when asked. */
export function linesNow(lines: LinesWhenAsked): readonly StatementLine[] {
  return typeof lines === 'function' ? lines() : lines;
}

/**
 * A statement's lines as built statements carry them: JSON, the amounts as strings. Copies of the
 * lines with the amount as a string, not a replacer turning bigints into strings: the replacer
 * form took 300-311 ms per 100,000 CAMT.053 lines against 163-177 ms (scratch timing, three
 * rounds), and the copies are the small part of what a statement's hand-over holds (its JSON and
 * that JSON's bytes are each several times their size).
 */
export function linesToText(lines: readonly StatementLine[]): string {
  return JSON.stringify(lines.map((l) => ({ ...l, amountCents: l.amountCents.toString() })));
}

export function linesFromText(text: string): StatementLine[] {
  return (JSON.parse(text) as (Omit<StatementLine, 'amountCents'> & { amountCents: string })[]).map((l) => ({ ...l, amountCents: BigInt(l.amountCents) }));
}

/**
 * The rows stagedRows builds, for the columns above, written straight from the lines as COPY text,
 * without stagedRows' arrays: 100,000 MT940 lines took 0.77 s through stagedRows and a row writer
 * taking arrays against 0.19 s for JSON.stringify of stagedRows' lines (scratch timing, medians of 5).
 */
export function freshRows(section: StatementSection, lines: readonly StatementLine[], environment: string, statementId: number): FreshRows {
  const prefix = statementKeyPrefix(section);
  const head = `${environment}\t${statementId}\t`;
  const open = entriesOf(prefix, lines, wholeDays(section));
  const accounts: string[] = [];
  const dates: string[] = [];
  const seen = new Set<string>();
  for (const { first } of open) {
    const pair = `${first.accountIban}\n${first.bookingDate}`;
    if (first.accountIban === null || seen.has(pair)) continue;
    seen.add(pair);
    accounts.push(first.accountIban);
    dates.push(first.bookingDate);
  }
  return {
    entries: copyChunks(open, (e) =>
      `${environment}\t${e.key}\t${statementId}\t${copyField(e.first.accountIban)}\t${copyField(e.first.bookingDate)}\t${copyField(e.first.currency)}\t` +
      `${e.first.direction}\t${e.cents}\t${copyField(e.reference)}\t${e.key}\tnew\n`,
    ),
    lines: copyChunks(lines, (l) => {
      const position = positionKey(prefix, l);
      return (
        `${head}${position}\t${position}\t${entryKey(prefix, l)}\t${l.entryIndex}\t${l.txIndex}\t${copyField(l.accountIban)}\t${copyField(l.bookingDate)}\t` +
        `${copyField(l.valueDate)}\t${l.amountCents}\t${copyField(l.currency)}\t${l.direction}\t${copyField(l.counterpartyIban)}\t` +
        `${copyField(l.counterpartyName)}\t${copyField(l.endToEndId)}\t${copyField(l.bankReference)}\t${copyField(l.remittance)}\t` +
        `${copyField(l.sepaReference)}\n`
      );
    }),
    days: { accounts, dates },
    entryIndexes: open.map((e) => e.first.entryIndex),
  };
}
