import type { DateFormat } from './csv-profile.js';
import { currencyOfSign } from './csv-profile.js';
import { bankDate } from './dates.js';
import { csvAmountToCents, decimalToCents } from './money.js';
import { quoted, StatementFormatError } from './types.js';

/** Month names and abbreviations as English, German, Dutch, French and Italian exports write them. */
const MONTHS: Record<string, number> = {};
for (const [n, words] of [
  [1, 'jan january januar januari janv janvier gen gennaio jän jänner'],
  [2, 'feb february februar februari fév févr fevr février febbraio'],
  [3, 'mar march mär märz mrz maart mrt mars marzo'],
  [4, 'apr april avr avril aprile'],
  [5, 'may mai mei maggio mag'],
  [6, 'jun june juni juin giu giugno'],
  [7, 'jul july juli juil juillet lug luglio'],
  [8, 'aug august augustus aoû août ago agosto'],
  [9, 'sep sept september septembre set settembre'],
  [10, 'oct october okt oktober octobre ott ottobre'],
  [11, 'nov november novembre'],
  [12, 'dec december dez dezember déc décembre dic dicembre'],
] as const) {
  for (const w of words.split(' ')) MONTHS[w] = n;
}

const PATTERNS: Record<DateFormat, { re: RegExp; order: 'ymd' | 'dmy' | 'mdy' }> = {
  'YYYY-MM-DD': { re: /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$/, order: 'ymd' },
  'YYYY/MM/DD': { re: /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?: .*)?$/, order: 'ymd' },
  YYYYMMDD: { re: /^(\d{4})(\d{2})(\d{2})$/, order: 'ymd' },
  'DD.MM.YYYY': { re: /^(\d{1,2})\.(\d{1,2})\.(\d{4})(?: .*)?$/, order: 'dmy' },
  'DD.MM.YY': { re: /^(\d{1,2})\.(\d{1,2})\.(\d{2})$/, order: 'dmy' },
  'DD/MM/YYYY': { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: .*)?$/, order: 'dmy' },
  'DD/MM/YY': { re: /^(\d{1,2})\/(\d{1,2})\/(\d{2})$/, order: 'dmy' },
  'MM/DD/YYYY': { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: .*)?$/, order: 'mdy' },
  'DD-MM-YYYY': { re: /^(\d{1,2})-(\d{1,2})-(\d{4})(?: .*)?$/, order: 'dmy' },
  'DD-MM-YY': { re: /^(\d{1,2})-(\d{1,2})-(\d{2})$/, order: 'dmy' },
  'D MMM YYYY': { re: /^(\d{1,2})[ .-]+([^\d\s.,-]+)\.?[ .-]+(\d{2}|\d{4})(?: .*)?$/u, order: 'dmy' },
  'MMM D, YYYY': { re: /^([^\d\s.,-]+)\.? (\d{1,2}),? (\d{4})$/u, order: 'mdy' },
};

/**
 * Two-digit years as MT940 reads them (dates.ts): 80-99 are 1980-1999, 00-79 are 2000-2079. The
 * file's own convention cannot be asked, and statements older than 1980 are refused anyway.
 */
const fullYear = (y: string): number => (y.length === 4 ? Number(y) : Number(y) < 80 ? 2000 + Number(y) : 1900 + Number(y));

function monthOf(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  return MONTHS[text.toLowerCase().replace(/\.$/, '')] ?? null;
}

/** A date cell in the first of `formats` it is a valid date in, as YYYY-MM-DD (bankDate's rules), or a refusal naming `what`. */
export function csvDate(value: string, formats: readonly DateFormat[], what: string): string {
  const [first] = csvDateReadings(value, formats, what, 1);
  if (first) return first.iso;
  // The refusal of the first format whose shape the cell has ('13/13/2026': no month 13), else a general one.
  for (const format of formats) {
    const iso = shapedIso(value.trim(), format);
    if (iso !== undefined) bankDate(iso, what, value);
  }
  throw new StatementFormatError(`${what} not understood: ${quoted(value)} (expected ${formats.join(' or ')})`);
}

/** The cell as YYYY-MM-DD in `format` by its shape alone (not yet checked to be a day), or undefined. */
function shapedIso(v: string, format: DateFormat): string | undefined {
  const { re, order } = PATTERNS[format];
  const m = re.exec(v);
  if (!m) return undefined;
  const [a, b, c] = [m[1]!, m[2]!, m[3]!];
  const [y, mo, d] = order === 'ymd' ? [a, b, c] : order === 'dmy' ? [c, b, a] : [c, a, b];
  const month = monthOf(mo);
  if (month === null) return undefined;
  return `${String(fullYear(y)).padStart(4, '0')}-${String(month).padStart(2, '0')}-${d.padStart(2, '0')}`;
}

/** Each of `formats` (in order, at most `limit`) in which the cell is a valid date, with that date. */
export function csvDateReadings(value: string, formats: readonly DateFormat[], what: string, limit = formats.length): { format: DateFormat; iso: string }[] {
  const v = value.trim();
  const out: { format: DateFormat; iso: string }[] = [];
  for (const format of formats) {
    if (out.length >= limit) break;
    const iso = shapedIso(v, format);
    if (iso === undefined) continue;
    try {
      out.push({ format, iso: bankDate(iso, what, value) });
    } catch {
      // Not a day in this format ('01/15/2026' as DD/MM/YYYY): perhaps in the next.
    }
  }
  return out;
}

/** How a file's dates are read: `read` each cell, then `end` once the file's last row is read. */
export interface CsvDateReader {
  read(value: string, what: string): string;
  /** Refuses the file when its dates never told apart two formats that read them differently. */
  end(): void;
}

/**
 * The dates of one file, read in one format. A profile may allow formats a date fits alike with
 * different days ('03/05/2026': 3 May as DD/MM/YYYY, 5 March as MM/DD/YYYY; PayPal writes either,
 * after the account's country). Only the file can tell which: the first date that only one of them
 * reads ('03/15/2026') decides the file's format. Until then such a date is read in the profile's
 * first format provisionally; a deciding date in another format refuses the file at that row (the
 * rows before it were read wrong, and the import stores nothing), and so does a file that ends
 * undecided: its dates would be a guess. A date that every format reads alike ('05/05/2026') is no
 * doubt. A profile with one format, or formats no date fits twice, never refuses here.
 */
export function csvDateReader(formats: readonly DateFormat[]): CsvDateReader {
  let decided: DateFormat | undefined;
  // The date that decided it, for the message refusing a later one.
  let decidedBy = '';
  // The first date read provisionally: its cell, what it is, and the formats it fitted.
  let doubt: { value: string; what: string; formats: DateFormat[] } | undefined;
  const fitted = (d: NonNullable<typeof doubt>) => `${d.what} ${quoted(d.value)} fits ${d.formats.join(' and ')} alike`;
  return {
    read(value, what) {
      const readings = csvDateReadings(value, formats, what);
      if (readings.length === 0) return csvDate(value, formats, what);
      if (decided !== undefined) {
        const reading = readings.find((r) => r.format === decided);
        if (reading) return reading.iso;
        throw new StatementFormatError(`${what} ${quoted(value)} is no ${decided} date, the file's format since ${decidedBy}: write a profile with the file's one date format`);
      }
      const shaped = formats.filter((f) => shapedIso(value.trim(), f) !== undefined);
      const distinct = new Set(readings.map((r) => r.iso));
      if (distinct.size > 1) {
        doubt ??= { value: value.trim(), what, formats: readings.map((r) => r.format) };
      } else if (shaped.length > 1 && readings.length === 1) {
        // Only one of the formats this cell's shape has reads it: the file's format.
        decided = readings[0]!.format;
        decidedBy = `${what} ${quoted(value.trim())}`;
        if (doubt !== undefined && doubt.formats[0] !== decided) {
          throw new StatementFormatError(`${what} ${quoted(value)} is no ${doubt.formats[0]} date, the format the file's earlier dates were read in (${fitted(doubt)}): write a profile with the file's one date format`);
        }
      }
      return readings[0]!.iso;
    },
    end() {
      if (doubt === undefined || decided !== undefined) return;
      throw new StatementFormatError(
        `${fitted(doubt)}, and so does every other date of the file: which is day and which month is a guess; write a profile with the file's one date format (docs/how-it-decides.md, "CSV profiles")`,
      );
    },
  };
}

/** Does the cell hold a date in one of the formats? */
export function isCsvDate(value: string, formats: readonly DateFormat[]): boolean {
  try {
    csvDate(value, formats, '');
    return true;
  } catch {
    return false;
  }
}

export interface CsvAmount {
  /** signed cents: negative is a debit when the amount's sign is its direction */
  cents: bigint;
  /** the currency the amount's own sign or code names ('£12.50', '12,50 EUR') */
  currency: string | null;
}

/**
 * An amount as banks write it, with `decimal` the profile's decimal separator: thousands grouped by
 * the other separator, a space, a no-break space or an apostrophe, in groups of three; a sign in
 * front or behind ('12,50-'), or brackets for a negative; a currency sign or code before or after.
 */
export function csvAmount(value: string, decimal: ',' | '.' | 'auto', what: string): CsvAmount {
  const refuse = (why = '') => new StatementFormatError(`${what} not understood: ${quoted(value)}${why}`);
  // A typographic apostrophe (U+2019) groups thousands as the plain one does (Windows' de-CH format: 1’234.50).
  let v = value.trim().replace(/\u2212/g, '-').replace(/\u2019/g, "'");
  let negative = false;
  const bracketed = /^\((.*)\)$/.exec(v);
  if (bracketed) {
    negative = true;
    v = bracketed[1]!.trim();
  }
  let currency: string | null = null;
  const units = v.match(/[^\d\s+.,'\-\u00a0\u202f]+/gu) ?? [];
  if (units.length > 1) throw refuse();
  if (units[0] !== undefined) {
    currency = currencyOfSign(units[0]);
    if (currency === null && units[0] !== '$') throw refuse();
    v = v.replace(units[0], '').trim();
  }
  let signed = false;
  if (/^[+-]/.test(v)) {
    negative = negative !== v.startsWith('-');
    v = v.slice(1).trim();
    signed = true;
  } else if (/[+-]$/.test(v)) {
    negative = negative !== v.endsWith('-');
    v = v.slice(0, -1).trim();
    signed = true;
  }
  // One sign at most: '--12.50', '(-12.00)' or '-12.50-' say two things, and which one the bank meant
  // is a guess.
  if ((signed && bracketed) || /^[+-]|[+-]$/.test(v)) throw refuse(' (more than one sign)');
  if (decimal === 'auto') {
    let cents: bigint;
    try {
      cents = csvAmountToCents(v);
    } catch (error) {
      throw new StatementFormatError(`${what.replace(/: amount$/, '')}: ${(error as Error).message}`);
    }
    return { cents: negative ? -cents : cents, currency };
  }
  const group = decimal === ',' ? '[.\\s\u00a0\u202f\']' : '[,\\s\u00a0\u202f\']';
  const m = new RegExp(`^(\\d{1,3}(?:(${group})\\d{3}(?:\\2\\d{3})*)?|\\d+)(?:\\${decimal}(\\d+))?$`).exec(v);
  if (!m) throw refuse(` (decimal separator '${decimal}')`);
  const cents = decimalToCents(`${m[1]!.replace(/\D/g, '')}.${m[3] ?? ''}`, what);
  return { cents: negative ? -cents : cents, currency };
}
