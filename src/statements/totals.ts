import { excerpt, StatementFormatError, type BalanceCheck, type Direction, type Totals } from './types.js';

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
 * somewhere between the bank and us: it is refused, naming the difference, rather than imported in
 * part; unless `acceptUnbalanced`, when the difference is returned for the import to store with a
 * finding. A statement without one of the balances cannot be checked: 'unchecked', naming the
 * missing one. Balances in two currencies are refused either way: no difference can be named.
 */
export function balanceCheck(
  what: string,
  opening: Balance | null,
  closing: Balance | null,
  booked: Totals,
  options: { acceptUnbalanced?: boolean; openingName: string; closingName: string },
): BalanceCheck {
  if (!opening || !closing) {
    const missing = [opening ? null : options.openingName, closing ? null : options.closingName].filter((m) => m !== null);
    return { state: 'unchecked', reason: `no ${missing.join(' and no ')}` };
  }
  if (opening.currency !== closing.currency) throw new StatementFormatError(`${what}: opening balance in ${excerpt(opening.currency)}, closing in ${excerpt(closing.currency)}`);
  // Bookings in another currency than the balances' cannot be checked against them, and an account
  // books in its own currency: such a statement is refused, balanced or not.
  for (const [currency, totals] of booked) {
    if (currency !== opening.currency && (totals.credit !== 0n || totals.debit !== 0n)) {
      throw new StatementFormatError(`${what}: bookings in ${excerpt(currency)} on a statement whose balances are in ${excerpt(opening.currency)}`);
    }
  }
  const t = booked.get(opening.currency) ?? { credit: 0n, debit: 0n };
  const computed = opening.cents + t.credit - t.debit;
  if (computed === closing.cents) return { state: 'balanced' };
  const message =
    `${what} does not balance: opening ${formatCents(opening.cents)} + credits ${formatCents(t.credit)} - debits ${formatCents(t.debit)} = ` +
    `${formatCents(computed)} ${excerpt(opening.currency)}, but the closing balance is ${formatCents(closing.cents)} (difference ${formatCents(closing.cents - computed)})`;
  if (!options.acceptUnbalanced) throw new StatementFormatError(message);
  return {
    state: 'unbalanced', currency: opening.currency, openingCents: opening.cents, creditCents: t.credit, debitCents: t.debit,
    closingCents: closing.cents, differenceCents: closing.cents - computed, message,
  };
}

/** Two checks of one statement's pages as one: an unbalanced page makes it unbalanced (the differences of several add up), else a page without a balance leaves it unchecked. */
export function combineChecks(a: BalanceCheck | undefined, b: BalanceCheck): BalanceCheck {
  if (!a || a.state === 'balanced') return b;
  if (b.state === 'balanced') return a;
  if (a.state === 'unbalanced' && b.state === 'unbalanced') {
    if (a.currency !== b.currency) return a;
    return {
      ...a, creditCents: a.creditCents + b.creditCents, debitCents: a.debitCents + b.debitCents, closingCents: b.closingCents,
      differenceCents: a.differenceCents + b.differenceCents, message: `${a.message}; ${b.message}`,
    };
  }
  return a.state === 'unbalanced' ? a : b;
}
