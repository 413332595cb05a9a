import { plainDecimalParts, type DecimalParts } from './decimal.js';

export type PayoutCurrency = 'EUR' | 'GBP';
export type DecimalSeparator = '.' | ',';

/** An amount cell's text taken apart: the sign, the currency it names, the digits and separators. */
export interface AmountText {
  negative: boolean;
  currency: PayoutCurrency | null;
  body: string;
}

const CURRENCY_AT_START = /^(€|£|EUR|GBP)\s*/i;
const CURRENCY_AT_END = /\s*(€|£|EUR|GBP)$/i;
const currencyOf = (token: string): PayoutCurrency => (token === '€' || token.toUpperCase() === 'EUR' ? 'EUR' : 'GBP');
// Thousands may be grouped by the other separator, spaces (also no-break and narrow no-break, as
// spreadsheets in fr-FR write them) or apostrophes (de-CH).
const groupedWhole = (decimal: DecimalSeparator) =>
  new RegExp(`^\\d{1,3}([\\s'\u00a0\u202f${decimal === '.' ? ',' : '.'}])\\d{3}(?:\\1\\d{3})*$`);
const BODY = /^\d(?:[\d.,'\s\u00a0\u202f]*\d)?$/;

/**
 * Peels the currency sign or code (before or after the number), a minus or plus sign (leading, or a
 * trailing minus as some ledgers print it) and accounting parentheses off an amount's text.
 */
export function splitAmount(text: string): AmountText | string {
  // A typographic apostrophe (U+2019) groups thousands as the plain one does: Windows' de-CH
  // number format writes it (1’234.50).
  let s = text.trim().replace(/\u2212/g, '-').replace(/\u2019/g, "'");
  let negative = false;
  let signed = false;
  let currency: PayoutCurrency | null = null;
  for (let changed = true; changed; ) {
    changed = false;
    if (s.startsWith('(') && s.endsWith(')')) {
      if (signed) return 'has two signs';
      signed = true;
      negative = true;
      s = s.slice(1, -1).trim();
      changed = true;
    }
    const token = CURRENCY_AT_START.exec(s) ?? CURRENCY_AT_END.exec(s);
    if (token) {
      if (currency !== null) return 'names a currency twice';
      currency = currencyOf(token[1]!);
      s = (token.index === 0 && s.startsWith(token[0]) ? s.slice(token[0].length) : s.slice(0, token.index)).trim();
      changed = true;
    }
    const sign = /^[-+]/.exec(s) ?? /-$/.exec(s);
    if (sign) {
      if (signed) return 'has two signs';
      signed = true;
      negative = sign[0] === '-';
      s = (sign.index === 0 ? s.slice(1) : s.slice(0, -1)).trim();
      changed = true;
    }
  }
  if (!BODY.test(s)) return 'is not an amount';
  return { negative, currency, body: s };
}

/**
 * What an amount's digits prove about the file's decimal separator: the last of '.' and ',' when
 * both occur; the other one when one occurs more than once (it groups thousands); the one that
 * occurs once when not followed by exactly three digits. '1.000' proves nothing: one or a thousand.
 */
export function decimalEvidence(body: string): DecimalSeparator | null {
  const dots = body.split('.').length - 1;
  const commas = body.split(',').length - 1;
  if (dots > 0 && commas > 0) return body.lastIndexOf('.') > body.lastIndexOf(',') ? '.' : ',';
  if (dots + commas === 0) return null;
  const only: DecimalSeparator = dots > 0 ? '.' : ',';
  if (dots + commas > 1) return only === '.' ? ',' : '.';
  return /[.,]\d{3}$/.test(body) ? null : only;
}

/**
 * An amount's digits read with the file's decimal separator (null when no cell of the file proved
 * one: then an amount with a separator is ambiguous and refused). Grouping must be in threes after
 * a first group of one to three digits, one separator throughout: '12,3.45' is refused.
 */
export function amountParts(amount: AmountText, decimal: DecimalSeparator | null): DecimalParts | string {
  const { body } = amount;
  if (decimal === null) {
    if (/[.,]/.test(body)) return 'could be read with either decimal separator (no amount in the file shows which one it uses)';
    decimal = '.';
  }
  const at = body.lastIndexOf(decimal);
  if (at !== body.indexOf(decimal)) return `has more than one decimal separator '${decimal}'`;
  const whole = at >= 0 ? body.slice(0, at) : body;
  const fraction = at >= 0 ? body.slice(at + 1) : '';
  if (at >= 0 && !/^\d+$/.test(fraction)) return 'has separators after its decimal separator';
  if (!/^\d+$/.test(whole) && !groupedWhole(decimal).test(whole)) {
    return 'has thousands separators that do not group three digits';
  }
  return { negative: amount.negative, units: whole.replace(/\D/g, ''), fraction };
}

/** A rate cell's text ('2,9 %', '2.9', '2.9%'): digits with at most one decimal separator. */
export function rateParts(text: string): DecimalParts | null {
  return plainDecimalParts(text.trim().replace(/\s*%$/, ''));
}
