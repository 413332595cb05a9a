import { StatementFormatError } from './types.js';

/**
 * Decimal text to integer cents by string and bigint arithmetic only: '1234.5' -> 123450n. A float
 * parse would turn '0.29' into 28.999999999999996 cents. The separator is '.' or ','; more than two
 * fractional digits are accepted only when the extra ones are zeros (CAMT allows five for any
 * currency, EUR amounts use two).
 */
export function decimalToCents(text: string): bigint {
  const m = /^([+-])?(\d+)(?:[.,](\d*))?$/.exec(text.trim());
  if (!m) throw new StatementFormatError(`not a decimal amount: '${text}'`);
  const [, sign, units = '0', fraction = ''] = m;
  if (fraction.length > 2 && !/^0+$/.test(fraction.slice(2))) {
    throw new StatementFormatError(`amount '${text}' has more than two significant fractional digits`);
  }
  const cents = BigInt(units) * 100n + BigInt(fraction.slice(0, 2).padEnd(2, '0'));
  return sign === '-' ? -cents : cents;
}

/**
 * A CSV amount that may carry thousands separators: when both '.' and ',' occur, the last one is the
 * decimal separator ('1.234,56', '1,234.56'); one of them occurring once is the decimal separator;
 * spaces and apostrophes (Swiss grouping) group thousands too. Grouping must be in threes after a
 * first group of one to three digits, with one separator throughout: '12,3.4' is refused, not read
 * as 123.40.
 */
export function csvAmountToCents(text: string): bigint {
  const m = /^([+-]?)\s*([\d\s'.,\u00a0\u202f]+)$/.exec(text.trim());
  if (!m) throw new StatementFormatError(`not a decimal amount: '${text}'`);
  const sign = m[1]!;
  const body = m[2]!.trim();
  const dots = body.split('.').length - 1;
  const commas = body.split(',').length - 1;
  const decimalAt = dots > 0 && commas > 0 ? Math.max(body.lastIndexOf('.'), body.lastIndexOf(',')) : dots + commas === 1 ? body.search(/[.,]/) : -1;
  const whole = decimalAt >= 0 ? body.slice(0, decimalAt) : body;
  const fraction = decimalAt >= 0 ? `.${body.slice(decimalAt + 1)}` : '';
  if (/\D/.test(whole) && !/^\d{1,3}([\s'.,\u00a0\u202f])\d{3}(?:\1\d{3})*$/.test(whole)) {
    throw new StatementFormatError(`not a decimal amount: '${text}' (thousands separators must group three digits)`);
  }
  return decimalToCents(`${sign}${whole.replace(/\D/g, '')}${fraction}`);
}
