import { quoted, StatementFormatError } from './types.js';

/**
 * The years a statement date may name: those an MT940 date can (two-digit years, 1980-2079,
 * mt940.ts). A CAMT or CSV date outside them is a misread or a corrupt file ('0226-03-02'), and
 * the ledger needs four-digit years Postgres takes: it has no year 0, and a JS date after 9999
 * prints as '+010000-01-01', which it refuses.
 */
export const FIRST_YEAR = 1980;
export const LAST_YEAR = 2079;

/**
 * A bank's YYYY-MM-DD date as the ledger stores it, or StatementFormatError naming `what` (and the
 * date as the file wrote it). A day past its month's end becomes the month's last day, the rule
 * mt940.ts keeps for German banks' 30 February interest value dates: the booking is kept.
 */
export function bankDate(iso: string, what: string, written: string = iso): string {
  // A statement's lines mostly repeat the date before: the last one read is kept (a date refused is not).
  if (lastRead !== null && iso === lastRead.iso) return lastRead.date;
  const date = checkedBankDate(iso, what, written);
  lastRead = { iso, date };
  return date;
}

let lastRead: { iso: string; date: string } | null = null;

function checkedBankDate(iso: string, what: string, written: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  const [year, month, day] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  if (!m || month < 1 || month > 12 || day < 1 || day > 31) throw new StatementFormatError(`${what} ${quoted(written)} is not a date`);
  if (year < FIRST_YEAR || year > LAST_YEAR) throw new StatementFormatError(`${what} ${quoted(written)} is outside the years ${FIRST_YEAR}-${LAST_YEAR} a bank statement names`);
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day > lastDay ? `${iso.slice(0, 8)}${String(lastDay).padStart(2, '0')}` : iso;
}
