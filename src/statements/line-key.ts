import { createHash } from 'node:crypto';
import type { StatementLine } from './types.js';

/**
 * The identity of a booked line, independent of the file that brought it: account, booking date,
 * amount, direction, SEPA reference and the bank's entry reference. Every format carries these
 * identically (names and remittance texts do not: MT940 truncates them), so the CAMT.053, CSV and
 * MT940 exports of one period and overlapping daily files produce the same keys, and a unique index
 * on it makes re-imports add nothing. Two genuinely identical bookings without a bank reference
 * would collapse into one; banks give every entry its own reference, so this is theoretical.
 */
export function lineKey(line: StatementLine): string {
  const parts = [
    line.accountIban ?? '',
    line.bookingDate,
    line.amountCents.toString(),
    line.direction,
    line.sepaReference ?? '',
    line.bankReference ?? '',
  ];
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}
