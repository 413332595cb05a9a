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
 * decimal separator and the other is dropped ('1.234,56', '1,234.56'); spaces and apostrophes
 * (Swiss grouping) are dropped too.
 */
export function csvAmountToCents(text: string): bigint {
  let t = text.trim().replace(/[\s']/g, '');
  const lastDot = t.lastIndexOf('.');
  const lastComma = t.lastIndexOf(',');
  if (lastDot >= 0 && lastComma >= 0) t = lastDot > lastComma ? t.replaceAll(',', '') : t.replaceAll('.', '');
  return decimalToCents(t);
}
