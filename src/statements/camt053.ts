import { accountId } from './account.js';
import { xmlTreeReader } from './camt-sax.js';
import { bankDate } from './dates.js';
import { amountOf, at, currencyCode, dateOf, instantOf, list, node, partyName, text, type Node } from './camt-xml.js';
import { collect } from './collect.js';
import { claimingNoWholeDay } from './line-key.js';
import { normalizeIban, present, sepaReferenceOf } from './reference.js';
import { addTotal, balanceCheck, combineChecks, type Balance } from './totals.js';
import {
  excerpt,
  quoted,
  StatementFormatError,
  type Direction,
  type ParsedStatement,
  type ReaderOptions,
  type SectionSink,
  type StatedBalance,
  type StatementLine,
  type StatementReader,
  type StatementSection,
} from './types.js';

// The other BkToCstmr messages of ISO 20022 cash management: reports and notifications, not statements.
const NOT_STATEMENTS: Record<string, string> = {
  BkToCstmrAcctRpt: 'camt.052 (BkToCstmrAcctRpt) is an intraday account report, not a statement: import the camt.053 of that day',
  BkToCstmrDbtCdtNtfctn: 'camt.054 (BkToCstmrDbtCdtNtfctn) is a debit/credit notification, not a statement: import the camt.053 of that day',
};

interface Open {
  lines: StatementLine[];
  booked: StatementSection['booked'];
  entries: number;
  firstDay: string | null;
  lastDay: string | null;
}

/**
 * ISO 20022 camt.053 (001.02 as German banks send it, and the later versions' shapes of Sts and
 * parties), read as a stream: each <Ntry> becomes lines when it closes, each <Stmt> is emitted
 * when it closes. One line per booked entry (Sts BOOK; pending and information-only entries are
 * not bookings). A batch entry is split into one line per transaction only when the transactions'
 * amounts add up to the entry's: banks send details for part of a batch, and a split then would
 * lose the rest. Otherwise the entry stays one line, with the one transaction's references if it
 * has exactly one.
 */
export function camt053Reader(emit: SectionSink, options: ReaderOptions = {}): StatementReader {
  let sections = 0;
  let open: Open | null = null;
  let sawStatementRoot = false;
  // GrpHdr/CreDtTm: the message's creation, which precedes its statements; the date of last resort.
  let created: string | null = null;
  // What the entries take from their statement (account, currency, date), read once for its
  // entries and read again after any other element of the statement or the header closes.
  let entryContext: EntryContext | null = null;
  // The pages read so far of a statement the bank split into pages (StmtPgntn), held until its last.
  let held: Held | null = null;
  const emitHeld = () => {
    if (!held) return;
    const h = held;
    held = null;
    emit(pagesSection(h), h.open.lines);
    sections += 1;
  };
  const xml = xmlTreeReader({
    open(name, path) {
      if (path.length === 1 && path[0] === 'Document') {
        const refusal = NOT_STATEMENTS[name];
        if (refusal) throw new StatementFormatError(refusal);
        if (name === 'BkToCstmrStmt') sawStatementRoot = true;
      }
      if (name === 'Stmt' && path.at(-1) === 'BkToCstmrStmt') {
        open = { lines: [], booked: new Map(), entries: 0, firstDay: null, lastDay: null };
        entryContext = null;
      }
    },
    close(name, value, path, parent) {
      if (name === 'CreDtTm' && path.at(-1) === 'GrpHdr' && path.at(-2) === 'BkToCstmrStmt') {
        created = text(value);
        entryContext = null;
      }
      if (name === 'Ntry' && path.at(-1) === 'Stmt' && open && parent) {
        // The statement's own elements (Id, FrToDt, Acct, Bal) precede its entries in the schema.
        entryContext ??= context(parent, sections, created);
        addEntry(open, entryContext, node(value), sections);
        return true;
      }
      if (path.at(-1) === 'Stmt') entryContext = null;
      if (name === 'Stmt' && path.at(-1) === 'BkToCstmrStmt' && open) {
        const done = open;
        open = null;
        const stmt = node(value);
        const section = finishStatement(stmt, done, sections, options);
        const page = pageOf(stmt, section);
        // The next page of the statement held: one statement with it (as MT940's :62M:/:60M: pages).
        if (held && page && page.key === held.key && page.number === held.number + 1) {
          addPage(held, page, section, done);
          if (page.last) emitHeld();
          return true;
        }
        emitHeld();
        for (const line of done.lines) line.section = sections;
        if (page) {
          held = { ...page, from: page.number, identities: [section.identity], section, open: done };
          if (page.last) emitHeld();
          return true;
        }
        emit(section, done.lines);
        sections += 1;
        return true;
      }
      return false;
    },
  });
  return {
    format: 'camt053',
    write(text) {
      xml.write(text);
    },
    end() {
      xml.end();
      emitHeld();
      if (!sawStatementRoot) throw new StatementFormatError('XML without Document/BkToCstmrStmt: not a camt.053 statement');
      if (sections === 0) throw new StatementFormatError('camt.053 without a <Stmt>: the file holds no statement');
    },
  };
}
/** A statement's page (StmtPgntn): what its pages share, its number and whether it is the last. */
interface Page {
  key: string;
  number: number;
  last: boolean;
}

/** The pages of one statement read so far: the first's number, the last's, and the statement they make. */
interface Held extends Page {
  from: number;
  identities: string[];
  section: StatementSection;
  open: Open;
}

/**
 * A page of a paginated statement: StmtPgntn's PgNb and LastPgInd; its pages share the account,
 * the statement's sequence number (ElctrncSeqNb, else LglSeqNb) and FrToDt. The bank writes each
 * page as a <Stmt> of its own, each with the statement's FrToDt and each balancing on its own.
 */
function pageOf(stmt: Node, section: StatementSection): Page | null {
  const number = text(at(stmt, 'StmtPgntn', 'PgNb'));
  if (number === null || !/^\d{1,5}$/.test(number)) return null;
  const last = text(at(stmt, 'StmtPgntn', 'LastPgInd'))?.toLowerCase();
  const sequence = text(stmt['ElctrncSeqNb']) ?? text(stmt['LglSeqNb']) ?? '';
  const period = ['FrDtTm', 'FrDt', 'ToDtTm', 'ToDt'].map((n) => text(at(stmt, 'FrToDt', n)) ?? '').join('|');
  return { key: [section.accountIban ?? '', sequence, period].join('|'), number: Number(number), last: last === 'true' || last === '1' };
}

/** Adds the next page to the statement held: its lines numbered on after the page before's entries. */
function addPage(held: Held, page: Page, section: StatementSection, done: Open): void {
  for (const line of done.lines) {
    line.entryIndex += held.open.entries;
    line.section = held.open.lines[0]?.section ?? line.section;
    held.open.lines.push(line);
  }
  held.open.entries += done.entries;
  for (const [currency, t] of done.booked) {
    addTotal(held.open.booked, currency, 'credit', t.credit);
    addTotal(held.open.booked, currency, 'debit', t.debit);
  }
  held.number = page.number;
  held.last = page.last;
  held.identities.push(section.identity);
  const h = held.section;
  held.section = {
    ...h,
    periodFrom: [h.periodFrom, section.periodFrom].filter((v) => v !== null).sort()[0] ?? null,
    periodTo: [h.periodTo, section.periodTo].filter((v) => v !== null).sort().at(-1) ?? null,
    balances: combineChecks(h.balances, section.balances!),
    // The statement of pages opens with its first page's opening balance and closes with this one's
    // closing, when this page opens where the one before closed: pages that do not continue each
    // other balance each on its own, not as a whole, and tell no continuation (consecutive.ts).
    ...(h.ends && section.ends && continues(h.ends.closing, section.ends.opening) ? { ends: { opening: h.ends.opening, closing: section.ends.closing } } : { ends: undefined }),
  };
}

/** Whether a page opens with the balance the page before closed with (amount and currency; its day may be the next). */
const continues = (closing: StatedBalance | null, opening: StatedBalance | null) =>
  closing !== null && opening !== null && closing.cents === opening.cents && closing.currency === opening.currency;

/**
 * The statement the pages held make: one statement, so its pages' equal bookings (two 4.50 card
 * payments without AcctSvcrRef, one on each page) are two entries of it and never paired with each
 * other by the day (overlap.ts rule 3), which each page claiming the day wholly did. Its identity is
 * its pages'. Only pages 1 to the last hold every booking of the period: pages without the first or
 * the last (the others in another file, or missing) claim no day wholly.
 */
function pagesSection(held: Held): StatementSection {
  const section: StatementSection = { ...held.section, identity: held.identities.join('||'), booked: held.open.booked };
  return held.from === 1 && held.last ? section : claimingNoWholeDay(section);
}

/** The whole document at once: the reader over one string. */
export function parseCamt053(xml: string, options: ReaderOptions = {}): ParsedStatement {
  return collect((emit) => camt053Reader(emit, options), xml);
}

/**
 * The statement's account, Acct/Id/IBAN or Acct/Id/Othr/Id: mandatory in the schema, and without
 * it the bookings belong to no account the overlap rule and the payout rules could tell apart.
 */
function accountOf(stmt: Node, where: string): string {
  if (stmt['Acct'] === undefined) throw new StatementFormatError(`${where}: no Acct: the statement names no account (Acct/Id/IBAN or Acct/Id/Othr/Id)`);
  const account = accountId(text(at(stmt, 'Acct', 'Id', 'IBAN')) ?? text(at(stmt, 'Acct', 'Id', 'Othr', 'Id')));
  if (account === null) throw new StatementFormatError(`${where}: Acct without Id/IBAN or Id/Othr/Id: the statement names no account`);
  return account;
}

/**
 * The day an entry without BookgDt and ValDt is dated by: the last day of the statement's FrToDt
 * (a ToDtTm at midnight ends the day before), else the statement's CreDtTm, else the message's
 * (GrpHdr/CreDtTm), each as the bank wrote its date.
 */
function statementDateOf(stmt: Node, created: string | null): string | null {
  const toDateTime = text(at(stmt, 'FrToDt', 'ToDtTm'));
  if (toDateTime) {
    const end = /T00:00:00(\.0+)?(Z|[+-]\d{2}:?\d{2})?$/.test(toDateTime) ? instantOf(toDateTime.slice(0, 10), false) : null;
    return end ? new Date(Date.parse(end) - 86_400_000).toISOString().slice(0, 10) : toDateTime.slice(0, 10);
  }
  return text(at(stmt, 'FrToDt', 'ToDt'))?.slice(0, 10) ?? text(stmt['CreDtTm'])?.slice(0, 10) ?? created?.slice(0, 10) ?? null;
}

type EntryContext = ReturnType<typeof context>;

function context(stmt: Node, index: number, created: string | null) {
  const id = text(stmt['Id']) ?? '';
  const where = `camt.053 statement ${excerpt(id) || index + 1}`;
  return {
    id,
    account: accountOf(stmt, where),
    accountCurrency: accountCurrencyOf(stmt, where),
    where,
    statementDate: statementDateOf(stmt, created),
  };
}

function addEntry(open: Open, c: EntryContext, entry: Node, section: number): void {
  const entryIndex = open.entries++;
  if (!isBooked(entry)) return;
  const where = `${c.where} entry ${entryIndex + 1}`;
  const amount = amountOf(entry['Amt'], where);
  if (!amount) throw new StatementFormatError(`${where}: no Amt`);
  // Ccy is mandatory in the schema: none here and none on the account is a broken file, not EUR.
  const currency = amount.currency ?? c.accountCurrency;
  if (currency === null || currency === undefined) throw new StatementFormatError(`${where}: the amount names no currency (Amt/@Ccy) and the account none (Acct/Ccy)`);
  const direction = directionOf(text(entry['CdtDbtInd']), where);
  for (const line of entryLines(entry, c, { cents: amount.cents, currency, direction }, section, entryIndex, where)) {
    open.lines.push(line);
    if (!open.firstDay || line.bookingDate < open.firstDay) open.firstDay = line.bookingDate;
    if (!open.lastDay || line.bookingDate > open.lastDay) open.lastDay = line.bookingDate;
  }
  // What the balances move by: the entry as booked, independent of how its details split it.
  addTotal(open.booked, currency, direction, amount.cents);
}

function finishStatement(stmt: Node, open: Open, index: number, options: ReaderOptions): StatementSection {
  const c = context(stmt, index, null);
  const period = periodOf(at(stmt, 'FrToDt'), c.where);
  const section: StatementSection = {
    identity: '',
    accountIban: c.account,
    ...wholeDays(period.FrDtTm, period.ToDtTm),
    periodFrom: instantOf(period.FrDtTm ?? period.FrDt, false),
    periodTo: instantOf(period.ToDtTm ?? period.ToDt, true),
    booked: open.booked,
  };
  // No FrToDt: the statement covers whole days from its first to its last booking.
  section.periodFrom ??= instantOf(open.firstDay, false);
  section.periodTo ??= instantOf(open.lastDay, true);
  const stated = balancesOf(stmt, c.where);
  const paged = text(at(stmt, 'StmtPgntn', 'PgNb')) !== null;
  const { opening, closing } = endsOf(stated, paged);
  const checkOptions = { acceptUnbalanced: options.acceptUnbalanced, openingName: 'opening balance (OPBD/PRCD)', closingName: 'closing balance (CLBD)' };
  // A multi-currency account states a pair of balances per currency: each currency's bookings are
  // checked against its own pair (totals.ts refuses bookings in a currency no pair names). The
  // statement's result is the first currency's, or the first that did not balance.
  const currencies = [...new Set(stated.map((b) => b.currency))];
  if (currencies.length > 1) {
    const checks = currencies.map((currency) => {
      const ends = endsOf(stated, paged, currency);
      return balanceCheck(`${c.where} (${currency})`, ends.opening, ends.closing,
        new Map([...section.booked].filter(([booked]) => booked === currency || !currencies.includes(booked))), checkOptions);
    });
    section.balances = checks.find((check) => check.state === 'unbalanced') ?? checks.find((check) => check.state === 'unchecked') ?? checks[0]!;
  } else {
    section.balances = balanceCheck(c.where, opening, closing, section.booked, checkOptions);
    // The ends that tell a statement continuing another of the same day (consecutive.ts): a bank
    // that sends a day in two statements opens the second with the first's CLBD. A statement of
    // several currencies has a pair per currency and keeps none: its days are matched as before.
    section.ends = { opening: statedEnd(opening, c.where), closing: statedEnd(closing, c.where) };
  }
  const page = text(at(stmt, 'StmtPgntn', 'PgNb')) ?? '';
  const sequence = text(stmt['ElctrncSeqNb']) ?? text(stmt['LglSeqNb']) ?? '';
  // The identity names the first OPBD (else PRCD) and the first CLBD stated, whatever ends the
  // check takes: statements stored before interim and per-day balances were read keep their keys.
  const named = (codes: string[]) => codes.map((code) => stated.find((b) => b.code === code)).find((b) => b !== undefined)?.cents ?? '';
  section.identity = ['camt053', c.account ?? '', c.id, sequence, page, section.periodFrom ?? '', section.periodTo ?? '', named(['OPBD', 'PRCD']), named(['CLBD'])].join('|');
  return section;
}

/**
 * The bank-local days a FrToDt covers wholly: a date-time at midnight starts its day, one at
 * 23:59:59 (or midnight of the next day) ends it; a time inside a day leaves that day partial.
 */
function wholeDays(from: string | null, to: string | null): Pick<StatementSection, 'firstWholeDay' | 'lastWholeDay'> {
  const shift = (day: string, by: number) => new Date(Date.parse(`${day}T00:00:00Z`) + by * 86_400_000).toISOString().slice(0, 10);
  const timeOf = (v: string) => v.slice(11, 19);
  return {
    firstWholeDay: from ? (timeOf(from) === '00:00:00' ? from.slice(0, 10) : shift(from.slice(0, 10), 1)) : null,
    lastWholeDay: to ? (timeOf(to) >= '23:59:59' ? to.slice(0, 10) : shift(to.slice(0, 10), -1)) : null,
  };
}

type Period = Record<'FrDtTm' | 'FrDt' | 'ToDtTm' | 'ToDt', string | null>;

/**
 * FrToDt's dates and date-times, each of a real day (dates.ts bankDate: 30 February as its month's
 * last day) and a real time, or the statement is refused: a period that cannot be read would
 * otherwise be dropped, and the statement claim only its bookings' days. A date (ISODate, an
 * xs:date) may carry a time zone ('2026-03-02+01:00'): it is the bank's date, as booking dates are.
 */
function periodOf(period: unknown, where: string): Period {
  const out: Period = { FrDtTm: null, FrDt: null, ToDtTm: null, ToDt: null };
  for (const name of Object.keys(out) as (keyof Period)[]) {
    const value = text(at(period, name));
    if (value === null) continue;
    const what = `${where}: FrToDt/${name}`;
    if (!/^\d{4}-\d{2}-\d{2}/.test(value)) throw new StatementFormatError(`${what} ${quoted(value)} is not a date`);
    const day = bankDate(value.slice(0, 10), what, value);
    if (name === 'FrDt' || name === 'ToDt') {
      if (!/^(Z|[+-]\d{2}:?\d{2})?$/.test(value.slice(10))) throw new StatementFormatError(`${what} ${quoted(value)} is not a date`);
      out[name] = day;
    } else {
      const read = day + value.slice(10);
      if (instantOf(read, false) === null) throw new StatementFormatError(`${what} ${quoted(value)} is not a date-time`);
      out[name] = read;
    }
  }
  return out;
}

/** A balance as the statement states it (Bal): its type (Tp/CdOrPrtry/Cd, else Prtry) and subtype (Tp/SubTp/Cd). */
interface StatementBalance extends Balance {
  code: string | undefined;
  subtype: string | undefined;
  date: string | null;
}

/**
 * The balances a statement opens and closes with, of `currency` when one is named:
 * - The opening is an OPBD, else a PRCD; the closing a CLBD. A statement of several days may state
 *   one per day (the Finnish banks' ISO 20022 account statement guide: "the final balance data for
 *   each day is indicated"): it opens with the earliest and closes with the latest, by Dt, the
 *   first stated of equal dates.
 * - A page of a paginated statement (StmtPgntn) opens or closes with an interim balance (ITBD)
 *   where it does not open or close the statement: page 1 OPBD to ITBD, the next ITBD to ITBD, the
 *   last ITBD to CLBD (the same guide: ITBD with subtype OIBD, opening interim booked, and CIBD,
 *   closing). Without a subtype, the first ITBD stated opens and the last closes; one ITBD never
 *   stands for both ends, so a page with a single ITBD and neither end stays unchecked.
 */
function endsOf(stated: StatementBalance[], paged: boolean, currency?: string): { opening: StatementBalance | null; closing: StatementBalance | null } {
  const of = currency === undefined ? stated : stated.filter((b) => b.currency === currency);
  const firstOf = (codes: string[]) => {
    for (const code of codes) {
      const found = of.filter((b) => b.code === code);
      if (found.length > 0) return found;
    }
    return [];
  };
  const byDate = (found: StatementBalance[], latest: boolean) =>
    found.reduce<StatementBalance | null>((best, b) => (best === null || (b.date !== null && best.date !== null && (latest ? b.date > best.date : b.date < best.date)) ? b : best), null);
  let opening = byDate(firstOf(['OPBD', 'PRCD']), false);
  let closing = byDate(firstOf(['CLBD']), true);
  if (paged && (opening === null || closing === null)) {
    const interim = of.filter((b) => b.code === 'ITBD');
    const opens = interim.filter((b) => b.subtype === 'OIBD');
    const closes = interim.filter((b) => b.subtype === 'CIBD');
    const untyped = interim.filter((b) => b.subtype !== 'OIBD' && b.subtype !== 'CIBD');
    opening ??= opens[0] ?? (untyped.length > (closing === null && closes.length === 0 ? 1 : 0) ? untyped[0]! : null);
    closing ??= closes.at(-1) ?? (untyped.length > 0 && untyped.at(-1) !== opening ? untyped.at(-1)! : null);
  }
  return { opening, closing };
}

/** A balance with its code and day, for statement_balances; null when none is stated, or it states no real day. */
function statedEnd(found: StatementBalance | null, where: string): StatedBalance | null {
  if (found === null || found.code === undefined) return null;
  const date = balanceDay(found.date, where);
  return date === null ? null : { cents: found.cents, currency: found.currency, date, kind: found.code };
}

/** A balance's day, or null where the file states none or no real one: it only tells consecutive statements apart, so it refuses nothing. */
function balanceDay(value: string | null, where: string): string | null {
  if (value === null) return null;
  try {
    return bankDate(value, `${where}: balance date`);
  } catch {
    return null;
  }
}

/** The statement's account currency (Acct/Ccy), checked and trimmed as every amount's Ccy is; null when absent. */
function accountCurrencyOf(stmt: Node, where: string): string | null {
  return currencyCode(text(at(stmt, 'Acct', 'Ccy')), `${where}: Acct/Ccy`);
}

function balancesOf(stmt: Node, where: string): StatementBalance[] {
  const out: StatementBalance[] = [];
  for (const bal of list(stmt['Bal'])) {
    const code = text(at(bal, 'Tp', 'CdOrPrtry', 'Cd')) ?? text(at(bal, 'Tp', 'CdOrPrtry', 'Prtry')) ?? undefined;
    const subtype = text(at(bal, 'Tp', 'SubTp', 'Cd')) ?? undefined;
    const amount = amountOf(bal['Amt'], `${where}: balance ${code ?? ''}`);
    if (!amount) continue;
    const currency = amount.currency ?? accountCurrencyOf(stmt, where);
    if (currency === null || currency === undefined) throw new StatementFormatError(`${where}: balance ${code ?? ''} names no currency (Amt/@Ccy) and the account none (Acct/Ccy)`);
    // An indicator that is neither is refused rather than read as credit: a negative balance would
    // otherwise turn up as "does not balance", naming the wrong problem. None at all reads as credit.
    const indicator = text(bal['CdtDbtInd']);
    if (indicator !== null && indicator !== 'CRDT' && indicator !== 'DBIT') {
      throw new StatementFormatError(`${where}: balance ${code ?? ''}: CdtDbtInd ${quoted(indicator)} is neither CRDT nor DBIT`);
    }
    out.push({ code, subtype, cents: indicator === 'DBIT' ? -amount.cents : amount.cents, currency, date: dateOf(bal['Dt']) });
  }
  return out;
}

function isBooked(entry: Node): boolean {
  const status = text(entry['Sts']) ?? text(at(entry, 'Sts', 'Cd'));
  return !status || status === 'BOOK';
}

function directionOf(indicator: string | null, where: string): Direction {
  if (indicator !== 'CRDT' && indicator !== 'DBIT') throw new StatementFormatError(`${where}: CdtDbtInd ${quoted(indicator ?? '')} is neither CRDT nor DBIT`);
  return indicator === 'CRDT' ? 'credit' : 'debit';
}

/** An entry's date (ValDt, BookgDt) as the bank-local day, refused naming the entry when it is no real day. */
function entryDate(value: string | null, entryWhere: string, what: string): string | null {
  return value === null ? null : bankDate(value, `${entryWhere}: ${what}`);
}

/** TxDtls/Amt (001.03 and later) is in the account's currency; AmtDtls/TxAmt is what was instructed. */
function txAmount(tx: Node, entryWhere: string): { cents: bigint; currency: string | null } | null {
  return amountOf(tx['Amt'], entryWhere) ?? amountOf(at(tx, 'AmtDtls', 'TxAmt', 'Amt'), entryWhere);
}

/** A transaction's own CdtDbtInd, else its entry's direction. */
function txDirection(tx: Node, entryDirection: Direction): Direction {
  const ind = text(tx['CdtDbtInd']);
  return ind === 'CRDT' ? 'credit' : ind === 'DBIT' ? 'debit' : entryDirection;
}

type Base = Pick<StatementLine, 'accountIban' | 'bookingDate' | 'valueDate' | 'direction' | 'section' | 'entryIndex' | 'where'>;

/** A booked entry's lines; `booked` is its Amt (with the account's currency when it names none) and CdtDbtInd, read by addEntry. */
function entryLines(
  entry: Node,
  c: EntryContext,
  booked: { cents: bigint; currency: string; direction: Direction },
  section: number,
  entryIndex: number,
  entryWhere: string,
): StatementLine[] {
  const where = c.where;
  const { currency, direction } = booked;
  const valueDate = entryDate(dateOf(entry['ValDt']), entryWhere, 'ValDt');
  // BookgDt is optional in the schema: an entry without it is dated by its value date, else by the statement (statementDateOf).
  const bookingDate = entryDate(dateOf(entry['BookgDt']), entryWhere, 'BookgDt') ?? valueDate ?? (c.statementDate === null ? null : bankDate(c.statementDate, `${where}: statement date`));
  if (!bookingDate) throw new StatementFormatError(`${entryWhere}: entry without BookgDt or ValDt in a statement without FrToDt or CreDtTm`);
  const entryRef = text(entry['AcctSvcrRef']) ?? text(entry['NtryRef']);
  // Loops, not callbacks: this runs for every entry.
  const txs: Node[] = [];
  for (const details of list(entry['NtryDtls'])) for (const tx of list(details['TxDtls'])) txs.push(tx);
  const base: Base = { accountIban: c.account, bookingDate, valueDate, direction, section, entryIndex, where: entryWhere };
  const amounts: ({ cents: bigint; currency: string | null } | null)[] = [];
  // A batch with transactions of both directions is not split either: each line is booked in one direction.
  let whole = true;
  let sum = 0n;
  for (const tx of txs) {
    const a = txAmount(tx, entryWhere);
    amounts.push(a);
    if (a === null || (a.currency ?? currency) !== currency || txDirection(tx, direction) !== direction) whole = false;
    else sum += a.cents;
  }
  whole &&= sum === booked.cents;
  if (txs.length > 1 && whole) {
    return txs.map((tx, i) => {
      const ref = text(at(tx, 'Refs', 'AcctSvcrRef')) ?? (entryRef ? `${entryRef}/${i + 1}` : null);
      const line = lineOf(base, amounts[i]!.cents, currency, ref, tx, i);
      line.entryReference = entryRef;
      return line;
    });
  }
  // One transaction that is the whole entry (or in another currency: an FX payment, or less the
  // charges it states) lends the entry its references.
  const charges = txs.length === 1 && !whole ? chargesBetween(entry, txs[0]!, amounts[0]!, booked, entryWhere) : null;
  const only = txs.length === 1 && (whole || charges !== null || (amounts[0]?.currency ?? currency) !== currency || amounts[0] === null) ? txs[0]! : null;
  const line = lineOf(base, booked.cents, currency, entryRef, only ?? {}, 0);
  const additional = text(entry['AddtlNtryInf']);
  if (!only && txs.length > 0) {
    // Details for part of a batch: kept as evidence in the remittance text, but no reference of one
    // transaction is the whole entry's, so none becomes its SEPA reference.
    const parts = txs.map((tx, i) => `${text(at(tx, 'Refs', 'EndToEndId')) ?? '?'} ${amounts[i] ? amounts[i].cents.toString() : '?'}`);
    return [{ ...line, remittance: `${additional ? `${additional}; ` : ''}details of ${txs.length} transaction(s), not the whole entry: ${parts.join(', ')}`, sepaReference: null }];
  }
  // The entry's additional information stands in for a remittance the transaction lacks (its SEPA reference was read without it).
  line.remittance ??= present(additional);
  // An FX payment: what was instructed in another currency is kept in the remittance text, as the
  // details of a partial batch are, so the payout rules do not compare the booked amount with a
  // payout in that other currency (ledger/payout-credits.ts instructedCurrency reads INSTRUCTED_NOTE).
  const instructed = only ? instructedElsewhere(only, currency, entryWhere) : null;
  if (instructed) line.remittance = `${line.remittance ? `${line.remittance}; ` : ''}${INSTRUCTED_NOTE} ${instructed.currency} ${instructed.cents}`;
  if (charges !== null) line.remittance = `${line.remittance ? `${line.remittance}; ` : ''}${CHARGES_NOTE} ${currency} ${charges}`;
  return [line];
}

/** Written before the charges a booked amount is short of (or over) its one transaction by ('charges EUR 50'). */
const CHARGES_NOTE = 'charges';

/**
 * The charges that make the difference between an entry and its one transaction, in cents, or
 * null: an incoming transfer of 100.00 less 0.50 of the bank's charges books 99.50 (an outgoing one
 * 100.50), and its TxDtls states the 100.00 and the charges (Chrgs). Only when the difference is
 * exactly the charges the transaction (else the entry) states in the booked currency, in the same
 * direction, and the entry is no batch of several: then that transaction is the entry and lends it
 * its references and parties. Otherwise it is details for part of a batch, and lends nothing.
 */
function chargesBetween(
  entry: Node,
  tx: Node,
  amount: { cents: bigint; currency: string | null } | null,
  booked: { cents: bigint; currency: string; direction: Direction },
  entryWhere: string,
): bigint | null {
  if (amount === null || (amount.currency ?? booked.currency) !== booked.currency || txDirection(tx, booked.direction) !== booked.direction) return null;
  for (const details of list(entry['NtryDtls'])) {
    const count = text(at(details, 'Btch', 'NbOfTxs'));
    if (count !== null && count !== '1') return null;
  }
  const charges = chargesOf(tx, booked.currency, entryWhere) ?? chargesOf(entry, booked.currency, entryWhere);
  const difference = amount.cents > booked.cents ? amount.cents - booked.cents : booked.cents - amount.cents;
  return charges !== null && charges > 0n && difference === charges ? charges : null;
}

/**
 * The charges an element states in `currency`: Chrgs/TtlChrgsAndTaxAmt, else its records'
 * Chrgs/Rcrd/Amt (camt.053.001.04 and later), else Chrgs/Amt (001.02, where Chrgs repeats); null
 * where it states none, or any in another currency.
 */
function chargesOf(holder: Node, currency: string, where: string): bigint | null {
  const stated: unknown[] = [];
  for (const chrgs of list(holder['Chrgs'])) {
    const c = node(chrgs);
    if (c['TtlChrgsAndTaxAmt'] !== undefined) stated.push(c['TtlChrgsAndTaxAmt']);
    else if (c['Rcrd'] !== undefined) for (const record of list(c['Rcrd'])) stated.push(node(record)['Amt']);
    else stated.push(c['Amt']);
  }
  if (stated.length === 0) return null;
  let sum = 0n;
  for (const a of stated) {
    // Read only to explain the entry's amount: a charge in another currency, or with more decimals
    // than cents (ISO allows five), explains nothing and must not refuse a file that imported before.
    if ((text(node(a)['@_Ccy']) ?? currency) !== currency) return null;
    let value: { cents: bigint; currency: string | null } | null;
    try {
      value = amountOf(a, `${where}: Chrgs`);
    } catch {
      return null;
    }
    if (value === null) return null;
    sum += value.cents;
  }
  return sum;
}

/**
 * Written before an FX transaction's instructed currency and cents in its line's remittance text
 * ('instructed in GBP 100000'); ledger/payout-credits.ts instructedCurrency reads it back.
 */
export const INSTRUCTED_NOTE = 'instructed in';

/**
 * A transaction's amount in a currency other than the booked one: TxDtls/Amt (001.02 banks write
 * the instructed amount there), AmtDtls/InstdAmt or AmtDtls/TxAmt (later versions).
 */
function instructedElsewhere(tx: Node, currency: string, entryWhere: string): { cents: bigint; currency: string } | null {
  for (const amount of [tx['Amt'], at(tx, 'AmtDtls', 'InstdAmt', 'Amt'), at(tx, 'AmtDtls', 'TxAmt', 'Amt')]) {
    let a: { cents: bigint; currency: string | null } | null;
    // Read only for this note: an amount the import never needed does not refuse the file.
    try { a = amountOf(amount, entryWhere); } catch { continue; }
    if (a && a.currency !== null && a.currency !== currency) return { cents: a.cents < 0n ? -a.cents : a.cents, currency: a.currency };
  }
  return null;
}

/** One line, written out field by field, not spread from partial copies: a new object per line, not three. */
function lineOf(base: Base, cents: bigint, currency: string, bankReference: string | null, tx: Node, txIndex: number): StatementLine {
  const credit = base.direction === 'credit';
  const parties = tx['RltdPties'];
  const counterparty = credit ? 'Dbtr' : 'Cdtr';
  const ustrd = at(tx, 'RmtInf', 'Ustrd');
  const remittanceParts = (Array.isArray(ustrd) ? ustrd : [ustrd]).map(text).filter((t): t is string => t !== null);
  const structured = text(at(tx, 'RmtInf', 'Strd', 'CdtrRefInf', 'Ref'));
  if (structured) remittanceParts.push(structured);
  const remittance = remittanceParts.length > 0 ? remittanceParts.join(' ') : null;
  const endToEndId = present(text(at(tx, 'Refs', 'EndToEndId')));
  const instructionId = present(text(at(tx, 'Refs', 'InstrId')));
  return {
    accountIban: base.accountIban,
    bookingDate: base.bookingDate,
    valueDate: base.valueDate,
    amountCents: cents < 0n ? -cents : cents,
    currency,
    direction: base.direction,
    counterpartyIban: normalizeIban(text(at(parties, `${counterparty}Acct`, 'Id', 'IBAN'))),
    counterpartyName: partyName(at(parties, counterparty)),
    endToEndId,
    instructionId,
    bankReference,
    remittance,
    sepaReference: sepaReferenceOf({ endToEndId, instructionId, remittance }),
    section: base.section,
    entryIndex: base.entryIndex,
    txIndex,
    where: base.where,
  };
}
