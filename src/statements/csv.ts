import { createHash } from 'node:crypto';
import { accountId } from './account.js';
import { bankDate } from './dates.js';
import { csvAmountToCents, withinLedger } from './money.js';
import { normalizeIban, present, sepaReferenceOf } from './reference.js';
import { addTotal } from './totals.js';
import { quoted, StatementFormatError, type ParsedStatement, type SectionSink, type StatementLine, type StatementReader, type StatementSection } from './types.js';

/**
 * Accepted columns (header names compared case-insensitively, ignoring spaces, '-', '_', '/' and '.'):
 *
 * | field | header names | required |
 * |---|---|---|
 * | booking date | booking_date, bookingdate, buchungstag, date | yes |
 * | amount | amount, betrag | yes |
 * | value date | value_date, valuta, valutadatum | no |
 * | currency | currency, waehrung, währung, ccy | no (EUR) |
 * | direction | credit_debit, cdtdbtind, direction, soll_haben | no: else the amount's sign |
 * | bank reference | entry_reference, bank_reference, reference_number | no |
 * | end-to-end id | end_to_end_reference, end_to_end_id, endtoendid, eref, sepa_reference | no |
 * | instruction id | instruction_id, instrid | no |
 * | counterparty | counterparty_name, name, beguenstigter_zahlungspflichtiger; counterparty_iban, iban | no |
 * | remittance | remittance_information, remittance, verwendungszweck, purpose | no |
 * | account | account_iban, auftragskonto | no |
 *
 * Dates YYYY-MM-DD or DD.MM.YYYY; amounts decimal with '.' or ',' (thousands separators allowed
 * when both occur); direction values CRDT/DBIT, C/D, credit/debit, H/S (Haben/Soll). The header is
 * the first non-empty row naming both a booking date and an amount column, so a bank's preamble
 * rows above it are skipped. Delimiter ',' or ';' (whichever the header row holds more of), RFC 4180
 * quoting.
 */
const COLUMNS = {
  bookingDate: ['bookingdate', 'buchungstag', 'date'],
  amount: ['amount', 'betrag'],
  valueDate: ['valuedate', 'valuta', 'valutadatum'],
  currency: ['currency', 'waehrung', 'währung', 'ccy'],
  direction: ['creditdebit', 'cdtdbtind', 'direction', 'sollhaben'],
  bankReference: ['entryreference', 'bankreference', 'referencenumber'],
  endToEndId: ['endtoendreference', 'endtoendid', 'eref', 'separeference'],
  instructionId: ['instructionid', 'instrid'],
  counterpartyName: ['counterpartyname', 'name', 'beguenstigterzahlungspflichtiger'],
  counterpartyIban: ['counterpartyiban', 'iban'],
  remittance: ['remittanceinformation', 'remittance', 'verwendungszweck', 'purpose'],
  accountIban: ['accountiban', 'auftragskonto'],
} as const;
type Column = keyof typeof COLUMNS;

const canonical = (h: string): string => h.trim().toLowerCase().replace(/[\s_\-/.]/g, '');

/** RFC 4180 rows: quoted fields may hold the delimiter, "" and line breaks; CRLF or LF. */
export function csvRows(text: string, delimiter: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === delimiter) {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (quoted) throw new StatementFormatError('CSV ends inside a quoted field');
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** The header's delimiter and column positions, if `line` is a header row. */
export function csvHeader(line: string): { delimiter: string; columns: Partial<Record<Column, number>> } | null {
  const delimiter = (line.match(/;/g)?.length ?? 0) > (line.match(/,/g)?.length ?? 0) ? ';' : ',';
  const names = (csvRows(line, delimiter)[0] ?? []).map(canonical);
  const columns: Partial<Record<Column, number>> = {};
  for (const [column, aliases] of Object.entries(COLUMNS) as [Column, readonly string[]][]) {
    const index = names.findIndex((n) => aliases.includes(n));
    if (index >= 0) columns[column] = index;
  }
  return columns.bookingDate !== undefined && columns.amount !== undefined ? { delimiter, columns } : null;
}

/** `what` names the row and column for a refusal: 'CSV row 3: booking date'. */
function isoDate(value: string, what: string): string {
  const v = value.trim();
  const de = /^(\d{2})\.(\d{2})\.(\d{4})$/.exec(v);
  const iso = /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : de ? `${de[3]}-${de[2]}-${de[1]}` : null;
  if (iso === null) throw new StatementFormatError(`${what} not understood: ${quoted(value)}`);
  return bankDate(iso, what, value);
}

function directionOf(value: string | null, signed: bigint, where: string): 'credit' | 'debit' {
  const v = value?.trim().toUpperCase();
  if (!v) return signed < 0n ? 'debit' : 'credit';
  if (['CRDT', 'C', 'CREDIT', 'H', 'HABEN', 'CR'].includes(v)) return 'credit';
  if (['DBIT', 'D', 'DEBIT', 'S', 'SOLL', 'DR'].includes(v)) return 'debit';
  throw new StatementFormatError(`${where}: direction not understood: ${quoted(value ?? '')}`);
}

export function parseCsv(text: string): ParsedStatement {
  const body = text.replace(/^\uFEFF/, '');
  const physical = body.split(/\r?\n/);
  const headerAt = physical.findIndex((l) => l.trim() !== '' && csvHeader(l) !== null);
  if (headerAt < 0) throw new StatementFormatError('CSV without a header naming a booking date and an amount column');
  const header = csvHeader(physical[headerAt] ?? '')!;
  const rows = csvRows(physical.slice(headerAt + 1).join('\n'), header.delimiter);
  const lines: StatementLine[] = [];
  rows.forEach((row, i) => {
    if (row.every((c) => c.trim() === '')) return;
    const get = (c: Column): string | null => {
      const index = header.columns[c];
      return index === undefined ? null : present(row[index]);
    };
    const where = `CSV row ${headerAt + i + 2}`;
    const amountText = get('amount');
    const dateText = get('bookingDate');
    if (!amountText || !dateText) throw new StatementFormatError(`${where}: missing booking date or amount`);
    let read: bigint;
    try {
      read = csvAmountToCents(amountText);
    } catch (error) {
      throw new StatementFormatError(`${where}: ${(error as Error).message}`);
    }
    const signed = withinLedger(read, amountText, where);
    const endToEndId = get('endToEndId');
    const instructionId = get('instructionId');
    const remittance = get('remittance');
    const valueDate = get('valueDate');
    lines.push({
      accountIban: accountId(get('accountIban')),
      bookingDate: isoDate(dateText, `${where}: booking date`),
      valueDate: valueDate ? isoDate(valueDate, `${where}: value date`) : null,
      amountCents: signed < 0n ? -signed : signed,
      currency: get('currency')?.toUpperCase() ?? 'EUR',
      direction: directionOf(get('direction'), signed, where),
      counterpartyIban: normalizeIban(get('counterpartyIban')),
      counterpartyName: get('counterpartyName'),
      endToEndId,
      instructionId,
      bankReference: get('bankReference'),
      remittance,
      sepaReference: sepaReferenceOf({ endToEndId, instructionId, remittance }),
      section: 0,
      entryIndex: lines.length,
      txIndex: 0,
      where,
    });
  });
  const dates = lines.map((l) => l.bookingDate).sort();
  const first = dates[0];
  const last = dates[dates.length - 1];
  const nextDay = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString();
  const accountIban = lines.find((l) => l.accountIban)?.accountIban ?? null;
  // A CSV export states no period: it is taken to cover whole days from its first to its last booking.
  const periodFrom = first ? `${first}T00:00:00.000Z` : null;
  const periodTo = last ? nextDay(last) : null;
  // Nor does it name the statement: its identity is the account, the period and the bookings themselves.
  const digest = createHash('sha256');
  const booked: StatementSection['booked'] = new Map();
  for (const l of lines) {
    digest.update(`${l.bookingDate}|${l.amountCents}|${l.currency}|${l.direction}|${l.bankReference ?? ''}|${l.endToEndId ?? ''}\n`);
    addTotal(booked, l.currency, l.direction, l.amountCents);
  }
  const identity = ['csv', accountIban ?? '', periodFrom ?? '', periodTo ?? '', digest.digest('hex')].join('|');
  return { format: 'csv', accountIban, periodFrom, periodTo, sections: [{ identity, accountIban, periodFrom, periodTo, firstWholeDay: null, lastWholeDay: null, booked }], lines };
}

/** CSV has no statements inside it to emit one by one: the reader keeps the text and parses it at the end. */
export function csvReader(emit: SectionSink): StatementReader {
  const parts: string[] = [];
  return {
    format: 'csv',
    write(text) {
      parts.push(text);
    },
    end() {
      const parsed = parseCsv(parts.join(''));
      if (parsed.sections[0]) emit(parsed.sections[0], parsed.lines);
    },
  };
}
