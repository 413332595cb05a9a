// Money, dates and times as the person reading them writes them: the browser's locale (Intl), the
// time zone the merchant set (DISPLAY_TIME_ZONE, from /api/session). Cents never reach the eye here;
// they stay in the API's machine fields and the downloads.
let zone = 'UTC';
const cache = new Map();

function formatter(key, make) {
  let f = cache.get(key);
  if (!f) {
    f = make();
    cache.set(key, f);
  }
  return f;
}

export function setTimeZone(timeZone) {
  zone = timeZone || 'UTC';
  cache.clear();
}

export const timeZone = () => zone;

/** A decimal amount ('55629.31', exact as text) in its currency: '55.629,31 €' under de-DE. '' when there is none. */
export function money(amount, currency) {
  if (amount === null || amount === undefined || amount === '') return '';
  const value = String(amount);
  if (!/^-?\d+(\.\d+)?$/.test(value)) return value;
  const nf = currency
    ? formatter(`m:${currency}`, () => new Intl.NumberFormat(undefined, { style: 'currency', currency }))
    : formatter('n2', () => new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 }));
  // A numeric string is formatted exactly (Intl.NumberFormat v3), never through a float.
  return nf.format(value);
}

/** Integer cents (number or digits) as money: 5562931 -> '55.629,31 €'. */
export function moneyCents(cents, currency) {
  if (cents === null || cents === undefined || cents === '') return '';
  const text = String(cents);
  const m = /^(-?)(\d+)$/.exec(text);
  if (!m) return text;
  const digits = m[2].padStart(3, '0');
  return money(`${m[1]}${digits.slice(0, -2)}.${digits.slice(-2)}`, currency);
}

/** 'N cents' in a finding's sentence, as money: a person reads '55.629,31 €', not '5562931 cents'. */
export function centsInText(text, currency) {
  if (!text) return text ?? '';
  // Not after a letter, digit or hyphen: 'INV-2024 cents' is a reference, not minus 20.24.
  return String(text).replace(/(?<![\w-])(-?\d+) cents\b/g, (_, c) => moneyCents(c, currency || 'EUR'));
}

/**
 * 'name=N' checks in cents, as payout_deduction_mismatch writes its expected and observed values and
 * its sentence ('discount=14057;fee=30'), as money: 'discount 140,57 €; fee 0,30 €'.
 */
export function namedCentsInText(text, currency) {
  if (!text) return text ?? '';
  // mdr is a rate in percent ('mdr=2.5'), every other check cents (up to a bigint's 19 digits).
  return String(text)
    .replace(/\bmdr=(-?\d+(?:\.\d+)?)(?!\d|\.\d)/g, 'mdr $1 %')
    .replace(/\b([a-z_]+)=(-?\d{1,19})(?!\d|\.\d)/g, (_, name, c) => `${name} ${moneyCents(c, currency || 'EUR')}`)
    .replace(/;(?=[a-z_]+ )/g, '; ');
}

/** An instant (ISO 8601, UTC) in the display time zone, with the zone's short name. */
export function dateTime(iso) {
  if (!iso) return '';
  const at = new Date(String(iso).replace(' ', 'T'));
  if (Number.isNaN(at.getTime())) return String(iso);
  return formatter('dt', () => new Intl.DateTimeFormat(undefined, {
    timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', timeZoneName: 'short',
  })).format(at);
}

/** A calendar date ('2026-03-04', a booking or invoice day) in the locale's way; no zone shifts it. */
export function date(day) {
  if (!day) return '';
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(String(day));
  if (!m) return String(day);
  return formatter('d', () => new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }))
    .format(new Date(`${m[1]}T00:00:00Z`));
}

/** A whole number in the locale's grouping (1.234 under de-DE). */
export function count(n) {
  if (n === null || n === undefined || n === '') return '';
  return formatter('int', () => new Intl.NumberFormat()).format(Number(n));
}
