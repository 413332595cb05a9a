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
  const plain = () => formatter('n2', () => new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 }));
  // A numeric string is formatted exactly (Intl.NumberFormat v3), never through a float.
  if (!currency) return plain().format(value);
  // A code Intl does not take (a bank file's 'EURO') is written beside the number: one such value
  // must not keep a whole view from drawing.
  if (!/^[A-Za-z]{3}$/.test(currency)) return `${plain().format(value)} ${currency}`;
  return formatter(`m:${currency}`, () => new Intl.NumberFormat(undefined, { style: 'currency', currency })).format(value);
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

/** The display zone's offset from UTC in ms at an instant (by Intl, which every browser has; Temporal is not yet in all). */
function offsetAt(ms) {
  const parts = formatter('off', () => new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  })).formatToParts(new Date(ms));
  const n = (type) => Number(parts.find((p) => p.type === type)?.value);
  const wall = new Date(0);
  wall.setUTCFullYear(n('year'), n('month') - 1, n('day'));
  wall.setUTCHours(n('hour'), n('minute'), n('second'));
  return wall.getTime() - (ms - (((ms % 1000) + 1000) % 1000));
}

/**
 * The first instant of a picked day ('2026-12-01', an <input type="date">) in the zone the page shows
 * times in, written with that zone's offset: '2026-12-01T00:00:00+01:00' in Europe/Berlin. A day
 * filter then agrees with the times shown beside it; sent as the bare day, the API would read it as
 * UTC midnight, an hour late in Berlin. Where midnight does not exist (a clock set forward at 00:00)
 * the day begins at the change; where it happens twice, at the first. '' for no valid day.
 */
export function startOfDay(day) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(day ?? '').trim());
  if (!m) return '';
  const midnight = new Date(0);
  midnight.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const wall = midnight.getTime();
  if (Number.isNaN(wall) || midnight.getUTCMonth() !== Number(m[2]) - 1 || midnight.getUTCDate() !== Number(m[3])) return '';
  // The day's first instant is wall - offset for one of the offsets in force around it (a zone
  // changes its offset at most once within a day either side).
  const offsets = [...new Set([wall - 86_400_000, wall, wall + 86_400_000].map(offsetAt))];
  const exact = offsets.map((o) => wall - o).filter((t) => offsetAt(t) === wall - t);
  const first = exact.length ? Math.min(...exact) : Math.max(...offsets.map((o) => wall - o));
  const offset = offsetAt(first);
  // The API takes ±HH:MM; a zone's old local mean time (Berlin's +00:53:28 before 1893) has seconds.
  if (offset % 60_000 !== 0) return new Date(first).toISOString();
  const local = new Date(first + offset).toISOString().slice(0, 19);
  const abs = Math.abs(offset) / 60_000;
  return `${local}${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** A whole number in the locale's grouping (1.234 under de-DE). */
export function count(n) {
  if (n === null || n === undefined || n === '') return '';
  return formatter('int', () => new Intl.NumberFormat()).format(Number(n));
}
