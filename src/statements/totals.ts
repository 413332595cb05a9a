import { excerpt, StatementFormatError, type Direction, type Totals } from './types.js';

export function addTotal(totals: Totals, currency: string, direction: Direction, cents: bigint): void {
  const t = totals.get(currency) ?? { credit: 0n, debit: 0n };
  t[direction] += cents;
  totals.set(currency, t);
}

/** Cents as the bank prints them: 1234567n -> '12345.67', negative with '-'. */
export function formatCents(cents: bigint): string {
  const abs = cents < 0n ? -cents : cents;
  return `${cents < 0n ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** The differences between two totals, one phrase per currency and direction that differ; empty when equal. */
export function totalsDifference(expected: Totals, actual: Totals): string[] {
  const out: string[] = [];
  for (const currency of new Set([...expected.keys(), ...actual.keys()])) {
    for (const direction of ['credit', 'debit'] as const) {
      const e = expected.get(currency)?.[direction] ?? 0n;
      const a = actual.get(currency)?.[direction] ?? 0n;
      if (e !== a) out.push(`${direction}s ${excerpt(currency)} booked ${formatCents(e)}, stored ${formatCents(a)} (difference ${formatCents(e - a)})`);
    }
  }
  return out;
}

export interface Balance {
  /** signed cents, credit balance positive */
  cents: bigint;
  currency: string;
}

/**
 * Opening balance + booked credits - booked debits must equal the closing balance (MT940 :60x: and
 * :62x:, CAMT OPBD/PRCD and CLBD). A statement that does not add up has lost or invented a booking
 * somewhere between the bank and us: it is refused, naming the difference, rather than imported in part.
 */
export function checkBalances(what: string, opening: Balance | null, closing: Balance | null, booked: Totals): void {
  if (!opening || !closing) return;
  if (opening.currency !== closing.currency) throw new StatementFormatError(`${what}: opening balance in ${excerpt(opening.currency)}, closing in ${excerpt(closing.currency)}`);
  const t = booked.get(opening.currency) ?? { credit: 0n, debit: 0n };
  const computed = opening.cents + t.credit - t.debit;
  if (computed !== closing.cents) {
    throw new StatementFormatError(
      `${what} does not balance: opening ${formatCents(opening.cents)} + credits ${formatCents(t.credit)} - debits ${formatCents(t.debit)} = ` +
        `${formatCents(computed)} ${excerpt(opening.currency)}, but the closing balance is ${formatCents(closing.cents)} (difference ${formatCents(closing.cents - computed)})`,
    );
  }
}
