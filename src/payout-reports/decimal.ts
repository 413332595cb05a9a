/**
 * Decimal text to scaled integers by string and bigint arithmetic only: a float parse would turn
 * '0.29' into 28.999999999999996 cents. Amounts are scaled to cents (2 places), rates to micros
 * of a percent unit (4 places: 2.9 % -> 29000).
 */

/** A sign, integer digits and fraction digits, as read from a cell: no separators left. */
export interface DecimalParts {
  negative: boolean;
  units: string;
  fraction: string;
}

/**
 * The parts scaled to `places` decimals, or a reason when more fractional digits are significant
 * (trailing zeros beyond `places` are accepted: '12.500' is 12.50).
 */
export function scaled(parts: DecimalParts, places: number): bigint | string {
  const { fraction } = parts;
  if (fraction.length > places && !/^0+$/.test(fraction.slice(places))) {
    return `has more than ${places} decimal${places === 1 ? '' : 's'}`;
  }
  const value = BigInt(parts.units || '0') * 10n ** BigInt(places) + BigInt(fraction.slice(0, places).padEnd(places, '0') || '0');
  return parts.negative ? -value : value;
}

/**
 * A spreadsheet number's exact decimal digits, taken from its shortest round-trip representation
 * (what String() prints, exponent notation expanded): the XLSX stores 12.34 as the double nearest
 * to it, and 12.34 is the one decimal that reads back as that double.
 */
export function numberParts(value: number): DecimalParts | null {
  if (!Number.isFinite(value)) return null;
  const m = /^(-)?(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!m) return null;
  const [, minus, intDigits = '', fracDigits = '', exp] = m;
  const shift = exp === undefined ? 0 : Number(exp);
  let digits = intDigits + fracDigits;
  let point = intDigits.length + shift;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits = digits.padEnd(point, '0');
  return { negative: minus === '-', units: digits.slice(0, point).replace(/^0+(?=\d)/, '') || '0', fraction: digits.slice(point).replace(/0+$/, '') };
}

/** Plain decimal text ('2.9', '-0.5', '19'): a zod-friendly reading of the contract's percents. */
export function plainDecimalParts(text: string): DecimalParts | null {
  const m = /^([+-])?(\d+)(?:[.,](\d+))?$/.exec(text.trim());
  if (!m) return null;
  return { negative: m[1] === '-', units: m[2]!, fraction: m[3] ?? '' };
}

/** A percent in micros (2.9 -> 29000), or why not: at most 4 decimals, 0 to 100. */
export function percentMicros(parts: DecimalParts | null): number | string {
  if (parts === null) return 'is not a decimal number';
  const value = scaled(parts, 4);
  if (typeof value === 'string') return value;
  if (value < 0n || value > 1_000_000n) return 'is not between 0 and 100';
  return Number(value);
}

/** Integer cents as decimal text ('-1234' -> '-12.34'), for messages and reports. */
export function centsText(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** Micros of a percent as decimal text (29000 -> '2.9'). */
export function percentText(micros: number): string {
  const whole = Math.trunc(micros / 10_000);
  const fraction = String(micros % 10_000).padStart(4, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}
