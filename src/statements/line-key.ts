import { hash } from 'node:crypto';
import type { StatementLine, StatementSection } from './types.js';

/**
 * The keys of a statement's entries and lines share the statement's prefix: the first 32 hex
 * digits (128 bits) of the sha256 of its identity, then the entry's index and the line's
 * transaction index as 8 hex digits each. So the keys one statement brings sit side by side in
 * the key indexes of statement_lines and statement_entries, in the order they are written, where a
 * sha256 of each key scattered them over every page: a table shaped as statement_lines, 500,000
 * rows inserted in statements of 4,000, took 29.5 µs a row with scattered keys and 21.3 with a
 * shared prefix (bench/README.md, statements). staging.ts rekeyStaged computes the same in SQL.
 *
 * Statements stored before this form (bank_statements.key_format null) have the older keys, the
 * sha256 of the parts joined by line feeds; rule 1 of overlap.ts finds them by those as well.
 */
export const KEY_FORMAT = 2;

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/** The prefix every key of the statement starts with. */
export function statementKeyPrefix(section: StatementSection): string {
  return hash('sha256', `statement\n${section.identity}`, 'hex').slice(0, 32);
}

/**
 * Where a line stands: its statement's identity (types.ts StatementSection.identity), its entry's
 * index and its transaction's index. Unique per environment: the same statement imported again,
 * from the same bytes or another export of it, adds nothing, and two equal bookings in one
 * statement are two positions, so they stay two.
 */
export function positionKey(prefix: string, line: StatementLine): string {
  return `${prefix}:${hex8(line.entryIndex)}:${hex8(line.txIndex)}`;
}

/** The booked entry a line belongs to (its statement's identity and the entry's index): the lines of a split batch share it. */
export function entryKey(prefix: string, line: StatementLine): string {
  return `${prefix}:${hex8(line.entryIndex)}`;
}

const dayBefore = (instant: string): string => new Date(Date.parse(instant) - 1).toISOString().slice(0, 10);

/**
 * The bank-local days a statement covers wholly: the days its period names where it has times of
 * day (CAMT FrDtTm/ToDtTm, types.ts), else the days of its period (MT940, CSV and CAMT periods are
 * whole days, their instants written as UTC midnights of the bank's dates). Null: none known.
 */
export function wholeDays(section: StatementSection): { first: string | null; last: string | null } {
  return {
    first: section.firstWholeDay ?? section.periodFrom?.slice(0, 10) ?? null,
    last: section.lastWholeDay ?? (section.periodTo ? dayBefore(section.periodTo) : null),
  };
}

/**
 * `section` claiming no day wholly (a first whole day after the last), its period kept: a statement
 * without its first or last page holds only part of its days' bookings (camt053.ts pagesSection,
 * mt940.ts). Unchanged when its period is not known at both ends.
 */
export function claimingNoWholeDay<S extends StatementSection>(section: S): S {
  if (section.periodFrom === null || section.periodTo === null) return section;
  const shift = (day: string, by: number) => new Date(Date.parse(`${day}T00:00:00Z`) + by * 86_400_000).toISOString().slice(0, 10);
  return { ...section, firstWholeDay: shift(dayBefore(section.periodTo), 1), lastWholeDay: shift(section.periodFrom.slice(0, 10), -1) };
}

/** The entry's own reference: a split batch's lines carry '<entry>/<n>' or their transaction's, the entry keeps the batch's. */
export const entryReference = (line: StatementLine): string | null => (line.entryReference !== undefined ? line.entryReference : line.bankReference);
