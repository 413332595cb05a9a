import { createHash } from 'node:crypto';
import { Parser, type Options } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { accountId } from './account.js';
import { canonicalHeader, cellsMatching, currencyOfSign, headerRow, headerUnit, type CsvField, type CsvProfile, type HeaderRow } from './csv-profile.js';
import { BUILT_IN_PROFILES, COMMON_SKIP } from './csv-profiles.js';
import { csvAmount, csvDateReader, isCsvDate } from './csv-values.js';
import { withinLedger } from './money.js';
import { normalizeIban, present, sepaReferenceOf } from './reference.js';
import { addTotal } from './totals.js';
import { excerpt, quoted, StatementFormatError, type SectionSink, type StatementLine, type StatementReader, type StatementSection } from './types.js';

/**
 * CSV exports as banks write them, read by a bank profile (csv-profile.ts, csv-profiles.ts): the
 * profile is chosen from the file's first rows (its header row, or for files without one the shape
 * of its first row), and says which columns hold what, how the direction is written (a signed
 * amount; an unsigned one and a direction column; a debit and a credit column), the date formats,
 * the decimal separator, which rows are pending lines, totals or balances, and where the preamble
 * names the account and currency. The file is parsed as it streams (csv-parse), and its lines go
 * out in batches: memory does not grow with the file.
 *
 * Rows that are not bookings are never stored: pending lines (a status, a booking date such as
 * 'offen' or none at all, a block the bank marks as not yet executed), totals, balance and footer
 * rows (the profile's `skip` and COMMON_SKIP), empty rows; a row with neither date nor amount
 * continues the previous line's text. Any other row that cannot be read refuses the file, naming it.
 *
 * Currency, per line: the currency column, else the amount's own sign or code, else the amount
 * column's unit ('Betrag (EUR)'), else the preamble's, else the account's setting
 * (STATEMENT_ACCOUNT_CURRENCIES); else the file is refused, naming what is missing. Never assumed.
 */

export interface CsvOptions {
  /** profiles of the user's (a profile file), tried before the built-in ones */
  profiles?: readonly CsvProfile[];
  /** the currency of accounts whose CSV exports do not say (account IBAN -> ISO 4217 code) */
  accountCurrencies?: Readonly<Record<string, string>>;
}

/** Lines handed over at once while the file streams. */
const BATCH = 2000;
/** Rows of the file's start searched for the header row. */
const HEADER_ROWS = 60;
const DELIMITERS = [';', ',', '\t', '|'] as const;

export interface CsvLayout {
  profile: CsvProfile;
  delimiter: string;
  /** records before the first data row (preamble and header) */
  skipRecords: number;
  /** the header's cells, or none */
  header: string[] | null;
  columns: Partial<Record<CsvField, number[]>>;
  /** the amount columns' unit, when their header names one */
  unitCurrency: string | null;
  /** what the preamble above the header says */
  account: string | null;
  currency: string | null;
}

/** The entry index of a file's first fee line (csvReader, `fees`): beyond any CSV's row count, within an int4. */
const FEE_ENTRY_BASE = 1 << 30;

/** A record longer than this is no bank's booking: refused, naming its row, instead of filling the import's heap. */
export const MAX_RECORD_CHARS = 1 << 20;

// Every line ending at once: exports mix them (a CRLF file with a bare LF blank line), and csv-parse's
// discovery would take the first it meets and read a quote after another ending as text.
const PARSE: Options = { record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: true, relax_quotes: true, skip_empty_lines: false, max_record_size: MAX_RECORD_CHARS };

/**
 * The head's records with `delimiter`, the last (maybe cut) record dropped unless the head is the
 * whole text: the head is cut at its last line ending of any kind, since a file whose records end
 * with a bare CR (Excel for Mac's "CSV (Macintosh)") has no '\n' at all. A CR cut off its CRLF's LF
 * ends its record all the same.
 */
function headRecords(head: string, delimiter: string, whole: boolean): string[][] {
  const text = whole ? head : head.slice(0, Math.max(0, head.lastIndexOf('\n'), head.lastIndexOf('\r')));
  try {
    return parseSync(text, { ...PARSE, delimiter, to: HEADER_ROWS }) as string[][];
  } catch {
    return [];
  }
}

function columnsOf(profile: CsvProfile, row: HeaderRow): Partial<Record<CsvField, number[]>> {
  const cells = row.cells;
  const out: Partial<Record<CsvField, number[]>> = {};
  for (const [field, names] of Object.entries(profile.columns) as [CsvField, (string | number)[]][]) {
    const found: number[] = [];
    if (!profile.header) {
      for (const n of names) if (typeof n === 'number' && n <= cells.length) found.push(n - 1);
    } else {
      const at = new Set<number>();
      for (const n of names) if (typeof n === 'string') for (const i of cellsMatching(row, n)) at.add(i);
      // A loop, not push(...): a record may hold up to a million cells, more than a call's arguments.
      for (const i of [...at].sort((a, b) => a - b)) found.push(i);
    }
    if (found.length > 0) out[field] = field === 'remittance' ? found : [found[0]!];
  }
  return out;
}

/** The profile's fields (and required headers) that `cells` lacks, by their first name. */
function missingOf(profile: CsvProfile, row: HeaderRow, columns: Partial<Record<CsvField, number[]>>): string[] {
  const c = profile.columns;
  const first = (f: CsvField) => String(c[f]?.[0]);
  const missing: string[] = [];
  if (!columns.bookingDate) missing.push(first('bookingDate'));
  const split = c.debit && c.credit;
  if (c.amount && !columns.amount && !(split && columns.debit && columns.credit)) missing.push(first('amount'));
  if (!c.amount && split) for (const f of ['debit', 'credit'] as const) if (!columns[f]) missing.push(first(f));
  for (const r of profile.requires) if (cellsMatching(row, r).length === 0) missing.push(r);
  return missing;
}

const matchedCount = (columns: Partial<Record<CsvField, number[]>>) => Object.values(columns).reduce((n, v) => n + v.length, 0);

/** A row that is the first data row of a headerless profile: its cell count, a date and an amount where the profile says. */
function fitsHeaderless(profile: CsvProfile, row: readonly string[]): boolean {
  if (row.length !== profile.cells) return false;
  const cell = (f: CsvField) => {
    const n = profile.columns[f]?.[0];
    return typeof n === 'number' ? row[n - 1] ?? '' : '';
  };
  if (!isCsvDate(cell('bookingDate'), profile.dateFormats)) return false;
  const amounts = profile.columns.amount ? [cell('amount')] : [cell('debit'), cell('credit')].filter((v) => v.trim() !== '');
  return amounts.length > 0 && amounts.every((a) => {
    try {
      csvAmount(a, profile.decimal, '');
      return true;
    } catch {
      return false;
    }
  });
}

/** A preamble row's value for one of `labels`: 'IBAN;DE...', 'Währung: EUR', '"Konto";"DE.. EUR"'. */
function labelled(rows: readonly string[][], labels: readonly string[]): string | null {
  for (const wanted of labels) {
    for (const row of rows) {
      const cells = row.map((c) => c.trim()).filter((c) => c !== '');
      for (const [i, cell] of cells.entries()) {
        const colon = /^([^:]+):\s*(.*)$/.exec(cell);
        const [label, inline] = colon ? [colon[1]!, colon[2]!] : [cell, ''];
        if (canonicalHeader(wanted) !== canonicalHeader(label)) continue;
        const value = inline || cells[i + 1];
        if (value) return value;
      }
    }
  }
  return null;
}

function currencyIn(value: string | null): string | null {
  const code = value?.toUpperCase().match(/\b[A-Z]{3}\b/g)?.find((c) => !/^[A-Z]{2}\d/.test(c));
  return code ?? null;
}

/**
 * The layout of a CSV file from its start: the first row that is a header of some profile (the
 * user's profiles first, then the one explaining the most columns), else the first data row of a
 * headerless profile. A file no profile fits is refused naming the columns found and what the
 * nearest profile misses.
 */
/**
 * What a booking row carries and a balance or total row does not: VR-NetWorld's balance rows hold
 * their date, amount and direction, and the skip word in the booking-text or the Kundenreferenz
 * column, nothing else ('01.03.2026;;;;;;;;Anfangssaldo;;EUR;500,00;H'). A booking carries a value
 * date and a booking text besides ('05.03.2026;05.03.2026;;TOTAL;...;Kartenzahlung girocard ...'):
 * a card payment at a TOTAL station has the skip word as its counterparty and is still a booking.
 */
const BOOKING_DETAIL: readonly CsvField[] = ['counterpartyName', 'counterpartyIban', 'payer', 'payee', 'status', 'bankReference', 'endToEndId', 'instructionId', 'valueDate', 'remittance'];

export function csvLayout(head: string, whole: boolean, options: CsvOptions = {}): CsvLayout {
  const user = options.profiles ?? [];
  const profiles = [...user, ...BUILT_IN_PROFILES];
  let nearest: { profile: CsvProfile; cells: string[]; missing: string[]; score: number; row: number } | null = null;
  let widest: string[] = [];
  let widestRow = 1;
  for (const delimiter of DELIMITERS) {
    const rows = headRecords(head, delimiter, whole);
    for (const [index, cells] of rows.entries()) {
      if (cells.length < 2) continue;
      if (cells.length > widest.length) {
        widest = cells;
        widestRow = index + 1;
      }
      let best: { profile: CsvProfile; columns: Partial<Record<CsvField, number[]>>; rank: number } | null = null;
      let header: HeaderRow | undefined;
      for (const [order, profile] of profiles.entries()) {
        if (profile.delimiter !== undefined && profile.delimiter !== delimiter) continue;
        if (!profile.header) {
          if (!fitsHeaderless(profile, cells)) continue;
          const columns = columnsOf(profile, headerRow(cells));
          return { profile, delimiter, skipRecords: index, header: null, columns, unitCurrency: null, ...preamble(profile, rows.slice(0, index)) };
        }
        header ??= headerRow(cells);
        const columns = columnsOf(profile, header);
        const missing = missingOf(profile, header, columns);
        const score = matchedCount(columns) - missing.length;
        if (missing.length > 0) {
          if (matchedCount(columns) > 0 && (!nearest || score > nearest.score)) nearest = { profile, cells, missing, score, row: index + 1 };
          continue;
        }
        // The user's profiles win when they fit; among the built-in ones, the one explaining the most columns.
        const rank = order < user.length ? Number.MAX_SAFE_INTEGER - order : matchedCount(columns) * 1000 - order;
        if (!best || rank > best.rank) best = { profile, columns, rank };
      }
      if (best) {
        const amountColumns = [...(best.columns.amount ?? []), ...(best.columns.debit ?? []), ...(best.columns.credit ?? [])];
        const unitCurrency = amountColumns.map((i) => headerUnit(cells[i] ?? '')).find((u) => u !== null) ?? null;
        return { profile: best.profile, delimiter, skipRecords: index + 1, header: cells, columns: best.columns, unitCurrency, ...preamble(best.profile, rows.slice(0, index)) };
      }
    }
  }
  const found = nearest?.cells ?? widest;
  // Named by its row, like every other refusal of a CSV: the header row the nearest profile read.
  const row = nearest?.row ?? widestRow;
  const columns = found.length > 0 ? `the columns found: ${found.slice(0, 30).map((c) => quoted(excerpt(c.trim(), 40))).join(', ')}` : 'no columns found';
  const near = nearest ? `; the nearest profile, ${nearest.profile.name}, misses ${nearest.missing.map((m) => quoted(m)).join(', ')}` : '';
  throw new StatementFormatError(`CSV row ${row}: no bank profile fits this header (${columns}${near}); write a profile for it (statement import --profile FILE, see docs/how-it-decides.md, "CSV profiles")`);
}

function preamble(profile: CsvProfile, rows: readonly string[][]): { account: string | null; currency: string | null } {
  const account = labelled(rows, profile.metadata.account);
  const currency = labelled(rows, profile.metadata.currency);
  // An IBAN in the value ('DE44 5001 0517 ... / Girokonto', 'DE44...EUR') is the account; else the value as written.
  const iban = account?.replace(/\s+/g, '').toUpperCase().match(/[A-Z]{2}\d{2}[A-Z0-9]{11,33}/)?.[0];
  return { account: accountId(iban ?? account), currency: currencyIn(currency) };
}

/** Is the start of `text` a table some CSV profile could read, or one to refuse naming its columns? */
export function looksLikeCsv(head: string): boolean {
  try {
    csvLayout(head, true);
    return true;
  } catch {
    const rows = DELIMITERS.map((d) => headRecords(head, d, true).filter((r) => r.length >= 3));
    return rows.some((r) => r.length >= 2);
  }
}

/** csv-parse's stream parser used synchronously: records and errors are collected as each write returns. */
class SyncParser extends Parser {
  records: string[][] = [];
  failure: Error | undefined;
  override push(record: unknown): boolean {
    if (record !== null) this.records.push(record as string[]);
    return true;
  }
  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    super._transform(chunk, encoding, (error?: Error | null) => {
      this.failure ??= error ?? undefined;
      callback();
    });
  }
  override _flush(callback: (error?: Error | null) => void): void {
    super._flush((error?: Error | null) => {
      this.failure ??= error ?? undefined;
      callback();
    });
  }
}

const PROVISIONAL: StatementSection = { identity: 'csv (open)', accountIban: null, periodFrom: null, periodTo: null, firstWholeDay: null, lastWholeDay: null, booked: new Map() };

const includesAny = (text: string, needles: readonly string[]) => needles.some((n) => text.includes(n.toLowerCase()));

/**
 * The CSV reader: `head` (the file's start, detect.ts) decides the layout; the text then streams
 * through csv-parse and lines go to `emit` in batches of BATCH, each but the last with `more` set
 * and a provisional section: a CSV names no statement, so its identity (the account, the period and
 * the bookings themselves) is known only at the end, with the last batch.
 */
export function csvReader(emit: SectionSink, head: string, whole: boolean, options: CsvOptions = {}): StatementReader {
  const layout = csvLayout(head, whole, options);
  const { profile, columns } = layout;
  const parser = new SyncParser({ ...PARSE, delimiter: layout.delimiter });
  const skip = [...profile.skip, ...COMMON_SKIP].map((s) => s.toLowerCase());
  const pending = {
    status: profile.pending.status.map((s) => s.toLowerCase()),
    bookingDate: profile.pending.bookingDate.map((s) => s.toLowerCase()),
    starts: profile.pending.startsBlock.map((s) => s.toLowerCase()),
    ends: profile.pending.endsBlock.map((s) => s.toLowerCase()),
  };
  const credit = new Set(profile.credit.map((v) => v.toUpperCase()));
  const debit = new Set(profile.debit.map((v) => v.toUpperCase()));
  const headerKey = layout.header?.map((c) => c.trim()).join('\u0000');

  let record = 0;
  let inPendingBlock = false;
  const dates = csvDateReader(profile.dateFormats);
  const readDate = dates.read;
  // The first non-empty row after the last booking or pending line, when it is none itself (a
  // balance row, a title, a booking's continued text): where another block may begin. A header row
  // repeated after such rows starts another account's block (see `row`).
  let afterData: number | null = null;
  // The row a continuation row adds its text to: the last booking row's line (not its fee line).
  let held: StatementLine | null = null;
  // Fee lines (the profile's `fee` column) are entries of their own, numbered from here: after any
  // booking row's, so a booking row keeps its position (line-key.ts) whether or not rows before it
  // carry a fee, as it had in a statement stored before fees were read. entry_index is an int4.
  let fees = 0;
  // Whether the row before was stored as a booking (or continued one): only its text continues
  // on a row with neither date nor amount; a pending line's continuation is dropped with it.
  let lastRowBooked = false;
  // Whether the row before was a pending line left out (or its continuation): a row of text alone
  // after it goes with it, even at the top of the file (newest-first exports start with pending lines).
  let lastRowPending = false;
  // The cells a row may hold: the header's, or the headerless profile's count.
  const width = layout.header?.length ?? profile.cells ?? Number.MAX_SAFE_INTEGER;
  let batch: StatementLine[] = [];
  let count = 0;
  let first: string | null = null;
  let last: string | null = null;
  let accountIban: string | null = null;
  const digest = createHash('sha256');
  // The lines' counterparties and remittances, for the identity of a CSV that names no account.
  const texts = createHash('sha256');
  const booked: StatementSection['booked'] = new Map();

  const cellOf = (row: readonly string[], field: CsvField): string | null => {
    const i = columns[field]?.[0];
    return i === undefined ? null : present(row[i]);
  };

  const flush = (final: boolean) => {
    // The last booking row's lines stay behind until the next booking: a continuation row may still add to its text.
    const at = held === null ? -1 : batch.lastIndexOf(held);
    const keep = final || at < 0 ? 0 : batch.length - at;
    if (batch.length - keep < (final ? 0 : BATCH)) return;
    const out = batch.slice(0, batch.length - keep);
    batch = batch.slice(batch.length - keep);
    // Taken as the lines leave: no continuation row adds to their remittance after that. Fee lines
    // are not part of the identity (see `fees`).
    for (const l of out) if (l.entryIndex < FEE_ENTRY_BASE) texts.update(`${JSON.stringify([l.counterpartyName, l.remittance])}\n`);
    if (!final) emit(PROVISIONAL, out, true);
    else emit(section(), out);
  };

  const section = (): StatementSection => {
    const nextDay = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString();
    // A CSV export states no period: it is taken to cover whole days from its first to its last booking.
    const periodFrom = first ? `${first}T00:00:00.000Z` : null;
    const periodTo = last ? nextDay(last) : null;
    // Nor does it name the statement: its identity is the account, the period and the bookings themselves.
    const identity = ['csv', accountIban ?? '', periodFrom ?? '', periodTo ?? '', digest.digest('hex')].join('|');
    const section: StatementSection = { identity, accountIban, periodFrom, periodTo, firstWholeDay: null, lastWholeDay: null, booked };
    if (accountIban !== null) return section;
    // A CSV naming no account (N26, Revolut, Wise, PayPal and Monzo export none) is recognised by its
    // bookings alone: two accounts' exports with an equal amount on an equal day had one identity,
    // and the second's booking was taken as known and never stored. Its counterparties and
    // remittances are part of its identity too. Statements stored before under the identity without
    // them stay recognised: rule 1 of overlap.ts finds their entries by that former identity where
    // the stored lines' texts are the file's (another account's booking is not).
    return { ...section, identity: `${identity}|${texts.digest('hex')}`, formerIdentity: identity };
  };

  /** The row's fee (signed cents: positive is taken from the balance), null when none or zero. */
  const feeOf = (row: readonly string[], where: string, currency: string): bigint | null => {
    const text = cellOf(row, 'fee');
    if (text === null) return null;
    const fee = csvAmount(text, profile.decimal, `${where}: fee`);
    withinLedger(fee.cents, text, where);
    if (fee.currency !== null && fee.currency !== currency) {
      throw new StatementFormatError(`${where}: the fee ${quoted(text)} is in ${fee.currency}, the booking in ${currency}`);
    }
    return fee.cents === 0n ? null : fee.cents;
  };

  const amountOf = (row: readonly string[], where: string): { cents: bigint; direction: 'credit' | 'debit'; currency: string | null } => {
    const amountText = cellOf(row, 'amount');
    if (amountText !== null) {
      const a = csvAmount(amountText, profile.decimal, `${where}: amount`);
      withinLedger(a.cents, amountText, where);
      const abs = a.cents < 0n ? -a.cents : a.cents;
      const said = cellOf(row, 'direction')?.toUpperCase();
      if (said) {
        // A negative amount marked credit says the direction twice, and the two disagree: which the
        // bank meant is a guess ('-12,50;C' stored as a credit of 12.50 may be a debit). A negative
        // amount marked debit says it twice alike, and is read.
        if (credit.has(said) && a.cents < 0n) {
          throw new StatementFormatError(`${where}: the amount ${quoted(amountText)} is negative but the direction column says credit (${quoted(cellOf(row, 'direction')!)})`);
        }
        if (credit.has(said)) return { cents: abs, direction: 'credit', currency: a.currency };
        if (debit.has(said)) return { cents: abs, direction: 'debit', currency: a.currency };
        throw new StatementFormatError(`${where}: direction not understood: ${quoted(said)}`);
      }
      // A file that says each amount's direction in a column of its own writes the amounts
      // unsigned: an empty direction cell leaves a positive amount's direction unknown.
      if (columns.direction !== undefined && a.cents > 0n) throw new StatementFormatError(`${where}: direction is empty (the file gives each amount's direction in a column of its own)`);
      return { cents: abs, direction: a.cents < 0n ? 'debit' : 'credit', currency: a.currency };
    }
    const d = cellOf(row, 'debit');
    const c = cellOf(row, 'credit');
    const read = (text: string | null, what: string) => {
      if (text === null) return null;
      const a = csvAmount(text, profile.decimal, `${where}: ${what}`);
      withinLedger(a.cents, text, where);
      return { cents: a.cents < 0n ? -a.cents : a.cents, currency: a.currency };
    };
    const debitAmount = read(d, 'debit amount');
    const creditAmount = read(c, 'credit amount');
    if (debitAmount && creditAmount && debitAmount.cents !== 0n && creditAmount.cents !== 0n) {
      throw new StatementFormatError(`${where}: both a debit (${quoted(d!)}) and a credit (${quoted(c!)}) amount`);
    }
    if (debitAmount && (debitAmount.cents !== 0n || !creditAmount)) return { ...debitAmount, direction: 'debit' };
    if (creditAmount) return { ...creditAmount, direction: 'credit' };
    throw new StatementFormatError(`${where}: missing amount`);
  };

  const row = (cells: string[]) => {
    record++;
    if (record <= layout.skipRecords) return;
    if (cells.every((c) => c.trim() === '')) return;
    const continuesBooking = lastRowBooked;
    const continuesPending = lastRowPending;
    lastRowBooked = false;
    lastRowPending = false;
    const where = `CSV row ${record}`;
    if (headerKey !== undefined && cells.map((c) => c.trim()).join('\u0000') === headerKey) {
      // A header repeated right after bookings (or after a pending block's marker) goes on with the
      // same table. After other rows it starts a block of its own: comdirect's export of all
      // accounts writes each account's title, balances and header ('"Umsätze Tagesgeld
      // PLUS-Konto";...', '"Neuer Kontostand";"500,00 EUR"'), naming no account, so its bookings
      // would be stored as the first account's. Which block is which account cannot be told.
      if (afterData !== null) {
        throw new StatementFormatError(
          `CSV row ${record}: the header again, after rows that are no bookings from row ${afterData} on: several accounts' blocks in one file (export one account per file)`,
        );
      }
      inPendingBlock = false;
      return;
    }
    const text = cells.join(' ').toLowerCase();
    if (includesAny(text, pending.ends)) {
      inPendingBlock = false;
      return;
    }
    if (includesAny(text, pending.starts)) {
      inPendingBlock = true;
      return;
    }
    if (inPendingBlock) {
      afterData = null;
      return;
    }
    const firstCell = cells.find((c) => c.trim() !== '')!.trim().toLowerCase();
    // A balance or total row: a skip word as a whole cell, or at the start of the first. A dated row
    // is one only in a layout that dates them (`datedBalanceRows`: VR-Bank writes
    // '01.03.2026;...;Anfangssaldo;;EUR;500,00;H'), and there only without what a booking carries
    // (a counterparty, a reference, a status, a value date, a booking text: cells other than the skip
    // word itself, BOOKING_DETAIL). Anywhere else
    // a dated row is a booking whatever its text says (a card payment at a TOTAL station).
    const isSkipWord = (c: string) => skip.includes(c.trim().toLowerCase());
    if (skip.some((s) => firstCell.startsWith(s)) || cells.some(isSkipWord)) {
      const bookingDateText = cellOf(cells, 'bookingDate');
      const dated = bookingDateText !== null && isCsvDate(bookingDateText, profile.dateFormats);
      if (!dated) return;
      // The cell holding the skip word is no detail (VR-NetWorld writes Anfangssaldo in Kundenreferenz); any other non-empty one is.
      const detail = (i: number) => { const v = present(cells[i]); return v !== null && !isSkipWord(v); };
      if (profile.datedBalanceRows && !BOOKING_DETAIL.some((field) => (columns[field] ?? []).some(detail))) return;
    }
    const rowType = cellOf(cells, 'rowType');
    if (columns.rowType && !profile.bookingRowTypes.includes(rowType ?? '')) return;
    const status = cellOf(cells, 'status')?.toLowerCase();
    const dateText = cellOf(cells, 'bookingDate');
    const hasAmount = ['amount', 'debit', 'credit'].some((f) => cellOf(cells, f as CsvField) !== null);
    // A pending line (a status, a booking date such as 'offen', an amount without a booking date): not booked yet.
    if ((status && pending.status.includes(status)) || (dateText && pending.bookingDate.includes(dateText.toLowerCase())) || (!dateText && hasAmount)) {
      lastRowPending = true;
      afterData = null;
      return;
    }
    if (!dateText) {
      // Neither date nor amount: the previous line's text continues, unless that line was left out.
      if (continuesPending) {
        lastRowPending = true;
        return;
      }
      if (!held) throw new StatementFormatError(`${where}: a row with neither booking date nor amount before any booking`);
      if (!continuesBooking) {
        // Text that continues no booking: a block's title. Balance and total rows (skip words) and a
        // booking's continued text are no sign of another block: a paged export of one account
        // repeats its header after 'Balance carried forward'. Set back to null by a booking or a pending line.
        afterData ??= record;
        return;
      }
      const more = cells.map((c) => c.trim()).filter((c) => c !== '').join(' ');
      held.remittance = held.remittance ? `${held.remittance} ${more}` : more;
      held.sepaReference = sepaReferenceOf(held);
      lastRowBooked = true;
      return;
    }
    if (!hasAmount) {
      // Text below the bookings (a disclaimer, a note, a block's title in the date column) is no
      // booking; a dated row without an amount may be one, and is refused.
      if (!isCsvDate(dateText, profile.dateFormats)) {
        afterData ??= record;
        return;
      }
      throw new StatementFormatError(`${where}: missing amount`);
    }
    // A booking row longer than its header had a delimiter inside a value: an unquoted decimal comma
    // ('2026-03-01,EUR,12,50' under 'booking_date,currency,amount') puts 12 under the amount and 50
    // beyond the header, and every cell after it moves one column on ('-12,50' in an N26 export: -12
    // under 'Amount (EUR)'). Refused, naming the row, rather than read as another amount. Empty cells
    // beyond the header (a delimiter at the end of each row) are allowed, except with a comma as the
    // delimiter: there the cell moved out of the header's width may be an empty one.
    if (cells.length > width && (layout.delimiter === ',' || cells.slice(width).some((c) => c.trim() !== ''))) {
      throw new StatementFormatError(
        `${where}: ${cells.length} cells, the header has ${width}: a value holds the delimiter ${quoted(layout.delimiter)} unquoted (an amount '12,50'?), and which cell is which cannot be told`,
      );
    }
    const bookingDate = readDate(dateText, `${where}: booking date`);
    const valueText = cellOf(cells, 'valueDate');
    const valueDate = valueText ? readDate(valueText, `${where}: value date`) : null;
    const amount = amountOf(cells, where);
    const account = accountId(cellOf(cells, 'accountIban')) ?? layout.account;
    // The currency column as a code ('€' and 'Euro' are EUR); one the amount's own sign contradicts
    // ('£12.50' under EUR) is refused rather than either guessed.
    const currencyText = cellOf(cells, 'currency');
    const columnCurrency = currencyText === null ? null : currencyOfSign(currencyText);
    if (currencyText !== null && columnCurrency === null) throw new StatementFormatError(`${where}: currency not understood: ${quoted(currencyText)}`);
    if (columnCurrency !== null && amount.currency !== null && amount.currency !== columnCurrency) {
      throw new StatementFormatError(`${where}: the amount is in ${amount.currency} but the currency column says ${columnCurrency}`);
    }
    const currency = (columnCurrency ?? amount.currency ?? layout.unitCurrency ?? layout.currency ?? (account ? options.accountCurrencies?.[account] : undefined)) ?? null;
    if (currency === null) {
      throw new StatementFormatError(
        `${where}: no currency: the file (${profile.name}) has no currency column, names none in its amounts, header or preamble, and ` +
          (account ? `STATEMENT_ACCOUNT_CURRENCIES sets none for account ${account}` : 'names no account whose currency STATEMENT_ACCOUNT_CURRENCIES could set'),
      );
    }
    const feeCents = feeOf(cells, where, currency);
    const remittance = present((columns.remittance ?? []).map((i) => cells[i]?.trim() ?? '').filter((v) => v !== '').join(' '));
    const endToEndId = cellOf(cells, 'endToEndId');
    const instructionId = cellOf(cells, 'instructionId');
    const line: StatementLine = {
      accountIban: account,
      bookingDate,
      valueDate,
      amountCents: amount.cents,
      currency,
      direction: amount.direction,
      counterpartyIban: normalizeIban(cellOf(cells, 'counterpartyIban')),
      counterpartyName: cellOf(cells, 'counterpartyName') ?? cellOf(cells, amount.direction === 'credit' ? 'payer' : 'payee'),
      endToEndId,
      instructionId,
      bankReference: cellOf(cells, 'bankReference'),
      remittance,
      sepaReference: sepaReferenceOf({ endToEndId, instructionId, remittance }),
      section: 0,
      entryIndex: count++,
      txIndex: 0,
      where,
    };
    afterData = null;
    if (first === null || bookingDate < first) first = bookingDate;
    if (last === null || bookingDate > last) last = bookingDate;
    accountIban ??= account;
    digest.update(`${line.bookingDate}|${line.amountCents}|${line.currency}|${line.direction}|${line.bankReference ?? ''}|${line.endToEndId ?? ''}\n`);
    addTotal(booked, line.currency, line.direction, line.amountCents);
    batch.push(line);
    held = line;
    lastRowBooked = true;
    if (feeCents !== null) {
      // The fee the bank took from the balance besides the amount (Revolut: the balance moves by
      // Amount minus Fee), a booking of its own as a bank statement books its charges: the
      // booking's amount stays what the counterparty paid or was paid, so payouts still match it,
      // and the lines add up to what the account moved. A negative fee is one given back.
      const feeHeader = present(layout.header?.[columns.fee![0]!]) ?? 'fee';
      const fee: StatementLine = {
        ...line,
        amountCents: feeCents < 0n ? -feeCents : feeCents,
        direction: feeCents < 0n ? 'credit' : 'debit',
        counterpartyIban: null,
        counterpartyName: null,
        endToEndId: null,
        instructionId: null,
        bankReference: null,
        remittance: remittance ? `${feeHeader}: ${remittance}` : feeHeader,
        // Never the booking's: a payout's reference on its fee would match the payout to the fee.
        sepaReference: null,
        entryIndex: FEE_ENTRY_BASE + fees++,
        where: `${where}: ${feeHeader}`,
      };
      addTotal(booked, fee.currency, fee.direction, fee.amountCents);
      batch.push(fee);
    }
  };

  const drain = () => {
    if (parser.failure) throw new StatementFormatError(`CSV row ${record + 1}: ${parser.failure.message}`);
    const records = parser.records;
    parser.records = [];
    for (const cells of records) row(cells);
    flush(false);
  };

  return {
    format: 'csv',
    write(text) {
      parser.write(text);
      drain();
    },
    end() {
      parser.end();
      drain();
      dates.end();
      flush(true);
    },
  };
}

/** The layout's profile name (for the import's result and log line). */
export const profileName = (layout: CsvLayout) => layout.profile.name;
