import { quoted, StatementFormatError } from './types.js';

/** 'where: ', or 'where ' after an MT940 tag, which ends with its own colon (':61:'). */
const placed = (where: string | undefined) => (where === undefined ? '' : where.endsWith(':') ? `${where} ` : `${where}: `);

/** The ledger's amount_cents is a Postgres bigint: an amount or balance beyond it is no bank's. */
export const MAX_CENTS = 9_223_372_036_854_775_807n;

const DECIMAL = /^([+-])?(\d+)(?:[.,](\d*))?$/;

/**
 * Decimal text to integer cents by string and bigint arithmetic only: '1234.5' -> 123450n. A float
 * parse would turn '0.29' into 28.999999999999996 cents. The separator is '.' or ','; more than two
 * fractional digits are accepted only when the extra ones are zeros (CAMT allows five for any
 * currency, EUR amounts use two). A refusal names `where` (the entry, the field) when given.
 */
export function decimalToCents(text: string, where?: string): bigint {
  const m = DECIMAL.exec(text.trim());
  if (!m) throw new StatementFormatError(`${placed(where)}not a decimal amount: ${quoted(text)}`);
  const [, sign, units = '0', fraction = ''] = m;
  if (fraction.length > 2 && !/^0+$/.test(fraction.slice(2))) {
    throw new StatementFormatError(`${placed(where)}amount ${quoted(text)} has more than two significant fractional digits`);
  }
  const hundredths = fraction.slice(0, 2).padEnd(2, '0');
  // Below 10^13 units the cents are exact as a double (under 2^53): one BigInt instead of three operations on them.
  const cents = units.length <= 13 ? BigInt(Number(units) * 100 + Number(hundredths)) : BigInt(units) * 100n + BigInt(hundredths);
  return sign === '-' ? -cents : cents;
}

/**
 * A statement's amount or balance (decimalToCents), refused naming `where` when it is beyond what
 * the ledger stores: a 40-digit amount is a corrupt file, and would otherwise reach Postgres
 * (bigint out of range) or fill every message about the statement's balance with its digits.
 */
export function statementCents(text: string, where: string): bigint {
  return withinLedger(decimalToCents(text, where), text, where);
}

/** `cents` read from `text`, or refused naming `where` when beyond the ledger's bigint. */
export function withinLedger(cents: bigint, text: string, where: string): bigint {
  if (cents > MAX_CENTS || cents < -MAX_CENTS) throw new StatementFormatError(`${placed(where)}amount ${quoted(text)} is beyond the largest the ledger stores (${MAX_CENTS} cents)`);
  return cents;
}

/**
 * A CSV amount that may carry thousands separators: when both '.' and ',' occur, the last one is the
 * decimal separator ('1.234,56', '1,234.56'); one of them occurring once is the decimal separator,
 * unless exactly three digits follow it ('1,000', '5.500': refused as ambiguous);
 * spaces and apostrophes (Swiss grouping) group thousands too. Grouping must be in threes after a
 * first group of one to three digits, with one separator throughout: '12,3.4' is refused, not read
 * as 123.40.
 */
export function csvAmountToCents(text: string): bigint {
  const m = /^([+-]?)\s*([\d\s'.,\u00a0\u202f]+)$/.exec(text.trim().replace(/\u2019/g, "'"));
  if (!m) throw new StatementFormatError(`not a decimal amount: ${quoted(text)}`);
  const sign = m[1]!;
  const body = m[2]!.trim();
  const dots = body.split('.').length - 1;
  const commas = body.split(',').length - 1;
  const decimalAt = dots > 0 && commas > 0 ? Math.max(body.lastIndexOf('.'), body.lastIndexOf(',')) : dots + commas === 1 ? body.search(/[.,]/) : -1;
  const whole = decimalAt >= 0 ? body.slice(0, decimalAt) : body;
  const fraction = decimalAt >= 0 ? `.${body.slice(decimalAt + 1)}` : '';
  // One separator before exactly three digits is a thousands group as often as a decimal point
  // ('5.500', '1,000'): read either way it would be a guess, 100 times off the other.
  if (dots + commas === 1 && /^\.\d{3}$/.test(fraction)) {
    throw new StatementFormatError(`ambiguous amount: ${quoted(text)} is a thousand-grouped whole number or has three decimals (set the profile's decimal separator)`);
  }
  if (/\D/.test(whole) && !/^\d{1,3}([\s'.,\u00a0\u202f])\d{3}(?:\1\d{3})*$/.test(whole)) {
    throw new StatementFormatError(`not a decimal amount: ${quoted(text)} (thousands separators must group three digits)`);
  }
  return decimalToCents(`${sign}${whole.replace(/\D/g, '')}${fraction}`);
}
