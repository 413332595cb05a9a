import { createHash } from 'node:crypto';
import type { StatementLine, StatementSection } from './types.js';

const sha = (parts: (string | number | bigint)[]): string => createHash('sha256').update(parts.join('\n')).digest('hex');

/**
 * Where a line stands: its statement's identity (types.ts StatementSection.identity), its entry's
 * index and its transaction's index. Unique per environment: the same statement imported again,
 * from the same bytes or another export of it, adds nothing, and two equal bookings in one
 * statement are two positions, so they stay two.
 */
export function positionKey(section: StatementSection, line: StatementLine): string {
  return sha(['position', section.identity, line.entryIndex, line.txIndex]);
}

/** The booked entry a line belongs to (its statement's identity and the entry's index): the lines of a split batch share it. */
export function entryKey(section: StatementSection, line: StatementLine): string {
  return sha(['entry', section.identity, line.entryIndex]);
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

/** The entry's own reference: a split batch's lines carry '<entry>/<n>' or their transaction's, the entry keeps the batch's. */
export const entryReference = (line: StatementLine): string | null => (line.entryReference !== undefined ? line.entryReference : line.bankReference);
