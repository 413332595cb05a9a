import { createHash } from 'node:crypto';
import type { ParsedStatement, StatementLine, StatementSection } from './types.js';

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

/**
 * Which booking a line is, across statements: the rule for overlapping statements of one account
 * (a daily and a monthly file, the CAMT.053 and the MT940 or CSV of one period). Unique per
 * environment, so a booking another statement already brought is not added again.
 *
 *  1. The bank's own reference, where it identifies the line: a line whose entry reference (CAMT
 *     AcctSvcrRef, MT940 '//' reference, CSV entry_reference; '<entry>/<n>' for a split batch) no
 *     other line of its statement shares with the same date, amount and direction is that booking,
 *     in any statement: key = account, booking date, currency, amount, direction, reference.
 *  2. Otherwise the statement's period decides. Statements that cover a booking day wholly hold
 *     all of its bookings, and two exports of a day are nested (the later holds what the earlier
 *     did), so the n-th equal booking of that day (same amount, direction, end-to-end id and
 *     reference) in one is the n-th in the other: key = account, day, those fields and n. Two equal
 *     bookings of one statement get n = 1 and 2 and stay two.
 *  3. A line on a day its statement covers only in part (a CAMT period with times of day inside
 *     it) cannot be told apart from an equal booking in another part-day statement: it keeps its
 *     position as its identity and is never merged.
 *
 * Lines of one format that carry a reference and of another that carry none (a CSV without the
 * reference column) are different keys: such a pair of exports adds the period twice.
 */
export function sectionBookingKeys(section: StatementSection, lines: readonly StatementLine[]): string[] {
  const tuple = (l: StatementLine): string =>
    [l.accountIban ?? '', l.bookingDate, l.currency, l.amountCents.toString(), l.direction, l.bankReference ?? ''].join('\n');
  const counts = new Map<string, number>();
  for (const l of lines) counts.set(tuple(l), (counts.get(tuple(l)) ?? 0) + 1);
  const occurrence = new Map<string, number>();
  return lines.map((l) => {
    const t = tuple(l);
    const reference = l.bankReference && !/^NONREF$/i.test(l.bankReference) ? l.bankReference : null;
    if (reference && counts.get(t) === 1) return sha(['reference', t]);
    const whole = (section.firstWholeDay === null || l.bookingDate >= section.firstWholeDay) && (section.lastWholeDay === null || l.bookingDate <= section.lastWholeDay);
    if (!whole) return positionKey(section, l);
    const day = [t, (l.endToEndId ?? '').toUpperCase()].join('\n');
    const n = (occurrence.get(day) ?? 0) + 1;
    occurrence.set(day, n);
    return sha(['day', day, n]);
  });
}

/** sectionBookingKeys for every statement of a parsed file, in the order of its lines. */
export function bookingKeys(parsed: ParsedStatement): string[] {
  return parsed.sections.flatMap((section, i) => sectionBookingKeys(section, parsed.lines.filter((l) => l.section === i)));
}
