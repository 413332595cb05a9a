import { statementCents } from './money.js';
import { quoted, StatementFormatError } from './types.js';

export type Node = Record<string, unknown>;

export const node = (v: unknown): Node => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : {});
export const list = (v: unknown): Node[] => (Array.isArray(v) ? v.map(node) : v === undefined ? [] : [node(v)]);

export function text(v: unknown): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (v !== null && typeof v === 'object' && '#text' in v) return text((v as Node)['#text']);
  return null;
}

/** The value at a path of up to four element names ('Refs', 'EndToEndId'); undefined where one is missing. */
// Fixed parameters, not a rest array: it runs about fifteen times per entry.
export function at(v: unknown, a: string, b?: string, c?: string, d?: string): unknown {
  let cur = node(v)[a];
  if (b === undefined) return cur;
  cur = node(cur)[b];
  if (c === undefined) return cur;
  cur = node(cur)[c];
  return d === undefined ? cur : node(cur)[d];
}

/** Dt (a date) or DtTm (a date-time) of a date choice element, as the bank-local YYYY-MM-DD it names. */
export function dateOf(choice: unknown): string | null {
  const value = text(at(choice, 'Dt')) ?? text(at(choice, 'DtTm'));
  return value ? value.slice(0, 10) : null;
}

/**
 * An Amt element. ISO 20022 amounts are unsigned (ActiveOrHistoricCurrencyAndAmount has
 * minInclusive 0; the direction is CdtDbtInd), so a signed one is refused rather than its sign
 * dropped: a credit of '-50.00' would otherwise be read as a credit of 50.00.
 */
export function amountOf(amt: unknown, where: string): { cents: bigint; currency: string | null } | null {
  const value = text(amt);
  if (value === null) return null;
  if (/^\s*[+-]/.test(value)) throw new StatementFormatError(`${where}: signed amount ${quoted(value)}: camt.053 amounts are unsigned, the direction is CdtDbtInd`);
  return { cents: statementCents(value, where), currency: currencyCode(text(node(amt)['@_Ccy']), `${where}: Ccy`) };
}

/**
 * A currency code as the schema has it (ActiveOrHistoricCurrencyCode, [A-Z]{3}), blanks around it
 * dropped; anything else ('EURO') is refused naming it: stored, it was no currency any reader of the
 * ledger could use (the page could not write an amount in it).
 */
export function currencyCode(value: string | null, where: string): string | null {
  if (value === null) return null;
  const code = value.trim();
  if (!/^[A-Za-z]{3}$/.test(code)) throw new StatementFormatError(`${where} ${quoted(value)} is not a currency code (three letters, ISO 4217)`);
  // ISO 4217 codes are upper case; a bank writing `Ccy="gbp"` means GBP, and every view compares codes.
  return code.toUpperCase();
}

/**
 * An ISO date or date-time as a UTC instant. The rule for time zones: a date-time with an offset
 * ('2026-03-02T10:00:00+01:00') is that instant; one without ('2026-03-02T10:00:00', which ISO
 * 20022 allows and several banks send) is the bank's local time, and, like a plain date and like
 * every booking date, it is kept as that wall-clock time written in UTC, never read in the
 * server's time zone, so periods and booking dates compare on the bank's own calendar. A plain
 * date is the start of that day, or with `endOfDay` the start of the next.
 */
export function instantOf(value: string | null, endOfDay: boolean): string | null {
  if (!value) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const d = new Date(`${value}T00:00:00Z`);
    if (endOfDay) d.setUTCDate(d.getUTCDate() + 1);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`;
  // A period ending 23:59:59 ends with its day: the next statement starting at midnight then
  // continues it without a one-second gap in the coverage payout_not_on_statement relies on.
  const endsDay = endOfDay && value.slice(11, 19) === '23:59:59';
  const d = new Date(endsDay ? zoned.replace(/T23:59:59(\.\d+)?/, 'T00:00:00') : zoned);
  if (endsDay) d.setUTCDate(d.getUTCDate() + 1);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** A party's name: <Nm> directly (001.02) or under <Pty> (001.08 and later). */
export function partyName(party: unknown): string | null {
  return text(at(party, 'Nm')) ?? text(at(party, 'Pty', 'Nm'));
}
