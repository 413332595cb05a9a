import { accountId } from './account.js';
import { bankDate } from './dates.js';
import { statementCents } from './money.js';
import { collect } from './collect.js';
import { claimingNoWholeDay } from './line-key.js';
import { mt940MessageReader, type Field } from './mt940-blocks.js';
import { mt940Details } from './mt940-details.js';
import { present, sepaReferenceOf } from './reference.js';
import { addTotal, balanceCheck, combineChecks, formatCents } from './totals.js';
import { excerpt, quoted, StatementFormatError, type ParsedStatement, type ReaderOptions, type SectionSink, type StatementLine, type StatedBalance, type StatementReader, type StatementSection } from './types.js';

/**
 * A YYMMDD date; SWIFT years have two digits, 80-99 are the 1900s (no bank statement predates 1980).
 * Some German banks date interest value dates 30 February (a 360-day interest month): the date
 * becomes the month's last day (dates.ts bankDate).
 */
function isoFromYymmdd(yymmdd: string, what: string): string {
  const month = Number(yymmdd.slice(2, 4));
  const day = Number(yymmdd.slice(4, 6));
  if (!/^\d{6}$/.test(yymmdd) || month < 1 || month > 12 || day < 1 || day > 31) throw new StatementFormatError(`${what} not a date: ${quoted(yymmdd)}`);
  const yy = Number(yymmdd.slice(0, 2));
  return bankDate(`${yy >= 80 ? 19 : 20}${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`, what, yymmdd);
}

/**
 * The booking (entry) date MMDD of :61: with the year that puts it nearest its message's balance
 * dates (:60x: and :62x: carry whole dates, and an entry is booked between them), else nearest its
 * value date; of two as near (both within a span longer than a year: an account that rarely moves
 * opens with the balance of a year before), the one nearest the value date. Taken from the value
 * date alone, a SEPA refund booked on 5 January with the debit's value date of 20 November (PSD2
 * art. 76 dates it back) was booked in the January of the value date's year, eleven months early:
 * its statement then claimed that whole year, and an unrelated booking of that day and amount took
 * its place. Day numbers, not Date objects: this runs for every line (with Date objects the MT940
 * import of 100,000 lines ran at 0.73x the lines per second).
 */
function bookingDateFrom(valueDate: string, mmdd: string | undefined, where: string, span: BalanceSpan): string {
  if (!mmdd) return valueDate;
  const month = Number(mmdd.slice(0, 2));
  const day = Number(mmdd.slice(2, 4));
  if (month < 1 || month > 12 || day < 1 || day > 31) throw new StatementFormatError(`${where}: :61: entry date not understood: ${quoted(mmdd)}`);
  const valueYear = Number(valueDate.slice(0, 4));
  const value = dayNumber(valueYear, Number(valueDate.slice(5, 7)), Number(valueDate.slice(8, 10)));
  const from = span.from ?? value;
  const to = span.to ?? value;
  let year = valueYear;
  let best = dayNumber(valueYear, month, day);
  // Within the span and half a year of the value date: every other year is farther from both.
  // (No closures here: this runs for every line.)
  if (best < from || best > to || Math.abs(best - value) > 182) {
    for (let other = valueYear - 1; other <= valueYear + 1; other += 2) {
      const t = dayNumber(other, month, day);
      const near = Math.max(0, from - t, t - to);
      const bestNear = Math.max(0, from - best, best - to);
      if (near < bestNear || (near === bestNear && Math.abs(t - value) < Math.abs(best - value))) {
        year = other;
        best = t;
      }
    }
  }
  return bankDate(`${year}-${mmdd.slice(0, 2)}-${mmdd.slice(2, 4)}`, `${where}: :61: entry date`, mmdd);
}

const DAYS_BEFORE_MONTH = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

/** Days since 1 January of year 0 (proleptic Gregorian); a day past its month's end counts as its last (30 February: bankDate). */
function dayNumber(year: number, month: number, day: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const length = month === 2 ? (leap ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  const before = year - 1;
  return year * 365 + Math.floor(before / 4) - Math.floor(before / 100) + Math.floor(before / 400) + DAYS_BEFORE_MONTH[month - 1]! + (leap && month > 2 ? 1 : 0) + Math.min(day, length);
}

/** The first and last of a message's balance dates (:60x:, :62x:) as day numbers, or nulls when it states neither. */
interface BalanceSpan {
  from: number | null;
  to: number | null;
}

// D/C mark, date, currency, amount; the amount as banks write it: '1234,56', '1234,', '1234', '1234.56'.
const BALANCE = /^(C|D)(\d{6})([A-Z]{3})(\d+(?:[,.]\d*)?)$/;
// :61: value date, optional entry date MMDD, mark (RC = reversal of a credit, RD = of a debit;
// EC/ED expected, as some exports write), optional funds code (third letter of the currency),
// amount ('.' or ',' or no decimals), then transaction type, customer reference, // bank reference.
const STATEMENT_LINE = /^(\d{6})(\d{4})?(RC|RD|EC|ED|C|D)([A-Z])?(\d+(?:[,.]\d*)?)(.*)$/;
// The transaction type: N, F or S and three characters ('NTRF', 'N192', 'NIT '); some banks leave it
// out and write the customer reference right after the amount, most often 'NONREF'.
const TYPE_CODE = /^(?!NONREF)[NFS][A-Z0-9 ]{3}/;

function balanceOf(f: Field, where: string): StatedBalance {
  const m = BALANCE.exec(f.value.trim());
  if (!m) throw new StatementFormatError(`${where}: :${f.tag}: not a balance: ${quoted(f.value.trim())}`);
  const cents = statementCents(m[4]!, `${where}: :${f.tag}:`);
  return { cents: m[1] === 'D' ? -cents : cents, currency: m[3]!, date: isoFromYymmdd(m[2]!, `${where}: :${f.tag}:`), kind: f.tag };
}

const nextDay = (d: string): string => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString();

interface Open {
  section: StatementSection;
  opening: StatedBalance | null;
  /** the closing balance of the statement's last page so far */
  closing: StatedBalance | null;
  number: string;
  currency: string;
  entries: number;
  /** its first page in the file opens with :60M:, continuing a page the file does not hold */
  startsMidway: boolean;
  /** its last page so far closes with :62M: (continued on a page after it) */
  continues: boolean;
}

// Balances that name the currency when the opening and closing ones are missing: closing available, forward available.
const OTHER_BALANCES = ['64', '65'];

/**
 * SWIFT MT940 (customer statement): one line per :61:, with the :86: that follows it. Each message
 * is one statement (a chain :60M: ... :62M: / :60M: ... :62F: of pages is one statement), checked
 * on its own: opening balance + bookings = closing balance (totals.ts balanceCheck); a page's :60M:
 * must be the :62M: of the page before it, or a page missing or repeated (each balanced on its
 * own) would lose or double its bookings unnoticed. A message without :60x: or :62x: (some banks
 * write only a :65F: forward balance, or no balance) is read with its balances recorded as
 * unchecked; its currency is then the :25: account's ('NL..EUR') or a :64:/:65: balance's, else it
 * is refused: no currency is assumed. A message with neither balances nor bookings is refused. A
 * statement's identity is its account, :28C: number and its balances with their dates (the :20:
 * is often the export's reference, not the statement's, and 'STARTUMS' at many German banks for
 * every statement), and its first and last booking days when a balance is missing.
 */
export function mt940Reader(emit: SectionSink, options: ReaderOptions = {}): StatementReader {
  let sections = 0;
  let messageIndex = 0;
  let open: (Open & { lines: StatementLine[] }) | null = null;
  const flush = (): void => {
    if (!open) return;
    // Without its first or last page, the statement holds only part of its days' bookings: it
    // claims no day wholly (as CAMT.053 pages without the first or last do, camt053.ts pagesSection),
    // or the overlap rule would pair another statement's bookings of those days with it by the day.
    emit(open.startsMidway || open.continues ? claimingNoWholeDay(open.section) : open.section, open.lines);
    sections += 1;
    open = null;
  };
  const messages = mt940MessageReader(({ fields, bic }) => {
    const where = `MT940 message ${++messageIndex}`;
    const accountField = fields.find((f) => f.tag === '25')?.value.split('\n')[0];
    const account = accountId(accountField, bic);
    const number = fields.find((f) => f.tag === '28C' || f.tag === '28')?.value.trim() ?? '';
    const openingField = fields.find((f) => f.tag === '60F' || f.tag === '60M');
    const closingField = fields.find((f) => f.tag === '62F' || f.tag === '62M');
    const opening = openingField ? balanceOf(openingField, where) : null;
    const closing = closingField ? balanceOf(closingField, where) : null;
    const hasLines = fields.some((f) => f.tag === '61');
    if (!opening && !closing && !hasLines) throw new StatementFormatError(`${where}: neither balances (:60F:/:60M:, :62F:/:62M:) nor bookings (:61:)`);
    const currency = opening?.currency ?? closing?.currency ?? currencyOf(fields, accountField, where);
    // A :60M: continues the statement whose page ended with :62M:.
    if (!(openingField?.tag === '60M' && open && open.section.accountIban === account)) {
      flush();
      const section: StatementSection = { identity: '', accountIban: account, firstWholeDay: null, lastWholeDay: null, periodFrom: null, periodTo: null, booked: new Map() };
      open = { section, opening, closing: null, number: number.split('/')[0] ?? '', currency, entries: 0, lines: [], startsMidway: openingField?.tag === '60M', continues: false };
    }
    const current = open!;
    const before = current.closing;
    if (before && opening && (before.cents !== opening.cents || before.currency !== opening.currency)) {
      throw new StatementFormatError(
        `${where}: :60M: opening balance ${formatCents(opening.cents)} ${excerpt(opening.currency)} does not continue the previous page's closing balance ` +
          `${formatCents(before.cents)} ${excerpt(before.currency)} (:62M:): a page of the statement is missing or repeated`,
      );
    }
    const messageBooked = new Map() as StatementSection['booked'];
    const dates = [opening?.date, closing?.date].filter((d): d is string => d !== undefined && d !== null).sort();
    const dayOf = (iso: string | undefined) => (iso === undefined ? null : dayNumber(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)), Number(iso.slice(8, 10))));
    const span: BalanceSpan = { from: dayOf(dates[0]), to: dayOf(dates.at(-1)) };
    fields.forEach((f, i) => {
      if (f.tag !== '61') return;
      const next = fields[i + 1];
      const entryIndex = current.entries++;
      const line = statementLine(f.value, currency, account, next?.tag === '86' ? next.value : undefined, where, sections, entryIndex, span);
      current.lines.push(line);
      addTotal(current.section.booked, line.currency, line.direction, line.amountCents);
      addTotal(messageBooked, line.currency, line.direction, line.amountCents);
    });
    const check = balanceCheck(`${where} (:28C: ${excerpt(number) || '?'})`, opening, closing, messageBooked, {
      acceptUnbalanced: options.acceptUnbalanced, openingName: 'opening balance (:60F:/:60M:)', closingName: 'closing balance (:62F:/:62M:)',
    });
    current.section.balances = combineChecks(current.section.balances, check);
    // Pages of which one lacks its :62M: still check as a whole: the first page's opening balance and
    // this page's closing balance bound every booking of the statement.
    if (current.section.balances.state === 'unchecked' && current.opening && closing) {
      current.section.balances = balanceCheck(`${where} (:28C: ${excerpt(number) || '?'}, pages from the first)`, current.opening, closing, current.section.booked, {
        acceptUnbalanced: options.acceptUnbalanced, openingName: 'opening balance (:60F:/:60M:)', closingName: 'closing balance (:62F:/:62M:)',
      });
    }
    current.closing = closing;
    current.section.ends = { opening: current.opening, closing };
    // A closing balance is the end-of-day booked balance of its date: the statement covers that whole
    // day. The opening balance's date is, at most banks, the previous statement's closing day, whose
    // bookings are not in this one: the statement covers the days after it. A bank that dates the
    // opening balance with the statement's own first day shows it by booking on that day (or by
    // closing on it): then the statement covers it too. Without a balance, the statement covers the
    // days of its bookings.
    let first: string | null = null;
    let last: string | null = null;
    for (const l of current.lines) {
      if (first === null || l.bookingDate < first) first = l.bookingDate;
      if (last === null || l.bookingDate > last) last = l.bookingDate;
    }
    const opened = current.opening?.date ?? null;
    const earliest = first === null || (closing && closing.date < first) ? (closing?.date ?? null) : first;
    const latest = closing?.date ?? last;
    current.section.periodFrom = earliest !== null && (opened === null || earliest <= opened) ? `${earliest}T00:00:00.000Z` : opened === null ? null : nextDay(opened);
    current.section.periodTo = latest === null ? null : nextDay(latest);
    const identity = ['mt940', account ?? '', current.number, current.opening?.date ?? '', current.opening?.cents ?? '', closing?.date ?? '', closing?.cents ?? '', current.currency];
    if (!current.opening || !closing) identity.push(first ?? '', last ?? '');
    current.section.identity = identity.join('|');
    current.continues = closingField?.tag === '62M';
    if (closingField?.tag === '62F') flush();
  });
  return {
    format: 'mt940',
    write(text) {
      messages.write(text);
    },
    end() {
      messages.end();
      flush();
      if (messageIndex === 0) throw new StatementFormatError('MT940 without a statement message (:20: ... :61: or :60x:/:62x:)');
    },
  };
}

/**
 * The currency of a message without an opening or closing balance: the :25: account's suffix
 * ('NL69INGB0123456789EUR', 'NL44RABO0123456789 EUR'), else a :64:/:65: balance's.
 */
function currencyOf(fields: Field[], account: string | undefined, where: string): string {
  const suffix = /[0-9]\s*([A-Z]{3})$/.exec(account?.trim() ?? '')?.[1];
  if (suffix) return suffix;
  const other = fields.find((f) => OTHER_BALANCES.includes(f.tag.slice(0, 2)));
  if (other) return balanceOf(other, where).currency;
  throw new StatementFormatError(`${where}: no balance (:60x:, :62x:, :64:, :65:) and no currency after the :25: account: the bookings' currency is unknown`);
}

/** The whole file at once: the reader over one string. */
export function parseMt940(text: string, options: ReaderOptions = {}): ParsedStatement {
  return collect((emit) => mt940Reader(emit, options), text);
}

/** One :61: with its :86:, the `entryIndex`-th booking of statement `section`, as a line written out field by field: spread into a copy with its place, the reader took 3.6 s of CPU for the benchmark's 100,000-line file instead of 2.2 s (median of five). */
function statementLine(value: string, currency: string, account: string | null, info: string | undefined, where: string, section: number, entryIndex: number, span: BalanceSpan): StatementLine {
  const first = value.split('\n')[0] ?? '';
  const m = STATEMENT_LINE.exec(first);
  if (!m) throw new StatementFormatError(`${where}: :61: not understood: ${quoted(first)}`);
  // SWIFT amounts have one decimal comma and no grouping: '1.230,00' matched as '1.230' followed by
  // ',00...' would be booked as 1.23, so digits or a separator right after the amount, or a zero
  // third decimal (which the amount reader takes as 1.23 too), refuse the line.
  if (/^[\d,.]/.test(m[6] ?? '') || /[,.]\d{2}0+$/.test(m[5]!)) {
    throw new StatementFormatError(`${where}: :61: amount not understood: ${quoted(first)} (one decimal separator, at most two decimals, no grouping)`);
  }
  const valueDate = isoFromYymmdd(m[1]!, `${where}: :61:`);
  const mark = m[3]!;
  let rest = m[6] ?? '';
  const type = TYPE_CODE.exec(rest);
  if (type) rest = rest.slice(type[0].length);
  const cut = rest.indexOf('//');
  const customerRef = present(cut >= 0 ? rest.slice(0, cut) : rest);
  const bankReference = present(cut >= 0 ? rest.slice(cut + 2) : null);
  const d = mt940Details(info);
  // The customer reference is the account owner's own: often 'NONREF', a keyword's name (ING writes
  // 'EREF' there to say the end-to-end reference is in :86:), or a 16-character fragment of an
  // EREF+/KREF+ keyword that German banks copy there. A SEPA reference only when it is none of these.
  const instructionId = customerRef && !/^(NONREF|EREF|KREF|MREF|PREF|IREF|CREF)$/i.test(customerRef) && !/^[A-Z]{4}\+/i.test(customerRef) ? customerRef : null;
  return {
    accountIban: account,
    bookingDate: bookingDateFrom(valueDate, m[2], where, span),
    valueDate,
    amountCents: statementCents(m[5]!, `${where}: :61:`),
    currency,
    // RC reverses a credit (money leaves), RD reverses a debit (money comes back).
    direction: mark === 'C' || mark === 'EC' || mark === 'RD' ? 'credit' : 'debit',
    counterpartyIban: d.counterpartyIban,
    counterpartyName: d.counterpartyName,
    endToEndId: d.endToEndId,
    instructionId,
    bankReference,
    remittance: d.remittance,
    sepaReference: sepaReferenceOf({ endToEndId: d.endToEndId, instructionId, remittance: d.remittance }),
    section,
    entryIndex,
    txIndex: 0,
    where: `${where} :61: ${entryIndex + 1}`,
  };
}
