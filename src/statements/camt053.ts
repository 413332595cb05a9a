import { accountId } from './account.js';
import { amountOf, at, camtParser, dateOf, instantOf, list, node, partyName, text, type Node } from './camt-xml.js';
import { normalizeIban, present, sepaReferenceOf } from './reference.js';
import { addTotal, checkBalances, type Balance } from './totals.js';
import { StatementFormatError, type Direction, type ParsedStatement, type StatementLine, type StatementSection } from './types.js';

// The other BkToCstmr messages of ISO 20022 cash management: reports and notifications, not statements.
const NOT_STATEMENTS: Record<string, string> = {
  BkToCstmrAcctRpt: 'camt.052 (BkToCstmrAcctRpt) is an intraday account report, not a statement: import the camt.053 of that day',
  BkToCstmrDbtCdtNtfctn: 'camt.054 (BkToCstmrDbtCdtNtfctn) is a debit/credit notification, not a statement: import the camt.053 of that day',
};

/** Why an XML document is not a camt.053 statement, or null when it is one. */
export function notCamt053(doc: unknown): string | null {
  const document = node(at(doc, 'Document'));
  for (const [element, reason] of Object.entries(NOT_STATEMENTS)) if (element in document) return reason;
  if (!('BkToCstmrStmt' in document)) return 'XML without Document/BkToCstmrStmt: not a camt.053 statement';
  if (list(at(document, 'BkToCstmrStmt', 'Stmt')).length === 0) return 'camt.053 without a <Stmt>: the file holds no statement';
  return null;
}

/**
 * ISO 20022 camt.053 (001.02 as German banks send it, and the later versions' shapes of Sts and
 * parties). One line per booked entry (Sts BOOK; pending and information-only entries are not
 * bookings). A batch entry is split into one line per transaction only when the transactions'
 * amounts add up to the entry's: banks send details for part of a batch, and a split then would
 * lose the rest. Otherwise the entry stays one line, with the one transaction's references if it
 * has exactly one.
 */
export function parseCamt053(xml: string): ParsedStatement {
  let doc: unknown;
  try {
    doc = camtParser.parse(xml, true);
  } catch (error) {
    throw new StatementFormatError(`not well-formed XML: ${(error as Error).message}`);
  }
  const refusal = notCamt053(doc);
  if (refusal) throw new StatementFormatError(refusal);
  const lines: StatementLine[] = [];
  const sections: StatementSection[] = [];
  list(at(doc, 'Document', 'BkToCstmrStmt', 'Stmt')).forEach((stmt, s) => {
    const account = accountId(text(at(stmt, 'Acct', 'Id', 'IBAN')) ?? text(at(stmt, 'Acct', 'Id', 'Othr', 'Id')));
    const accountCurrency = text(at(stmt, 'Acct', 'Ccy'));
    const id = text(stmt['Id']) ?? '';
    const where = `camt.053 statement ${id || s + 1}`;
    const statementDate = text(at(stmt, 'FrToDt', 'ToDtTm'))?.slice(0, 10) ?? text(at(stmt, 'FrToDt', 'ToDt')) ?? text(stmt['CreDtTm'])?.slice(0, 10) ?? null;
    const section: StatementSection = {
      identity: '',
      accountIban: account,
      ...wholeDays(at(stmt, 'FrToDt')),
      periodFrom: instantOf(text(at(stmt, 'FrToDt', 'FrDtTm')) ?? text(at(stmt, 'FrToDt', 'FrDt')), false),
      periodTo: instantOf(text(at(stmt, 'FrToDt', 'ToDtTm')) ?? text(at(stmt, 'FrToDt', 'ToDt')), true),
      booked: new Map(),
    };
    const sectionLines: StatementLine[] = [];
    list(stmt['Ntry']).forEach((entry, entryIndex) => {
      for (const line of entryLines(entry, account, accountCurrency, statementDate, where)) {
        sectionLines.push({ ...line, section: s, entryIndex });
      }
    });
    for (const l of sectionLines) lines.push(l);
    for (const entry of list(stmt['Ntry'])) {
      const booked = bookedAmount(entry, accountCurrency);
      if (booked) addTotal(section.booked, booked.currency, booked.direction, booked.cents);
    }
    // No FrToDt: the statement covers whole days from its first to its last booking.
    const days = sectionLines.map((l) => l.bookingDate).sort();
    section.periodFrom ??= instantOf(days[0] ?? null, false);
    section.periodTo ??= instantOf(days.at(-1) ?? null, true);
    const opening = balance(stmt, ['OPBD', 'PRCD']);
    const closing = balance(stmt, ['CLBD']);
    checkBalances(where, opening, closing, section.booked);
    const page = text(at(stmt, 'StmtPgntn', 'PgNb')) ?? '';
    const sequence = text(stmt['ElctrncSeqNb']) ?? text(stmt['LglSeqNb']) ?? '';
    section.identity = ['camt053', account ?? '', id, sequence, page, section.periodFrom ?? '', section.periodTo ?? '', opening?.cents ?? '', closing?.cents ?? ''].join('|');
    sections.push(section);
  });
  const from = sections.map((s) => s.periodFrom).filter((p): p is string => p !== null).sort()[0] ?? null;
  const to = sections.map((s) => s.periodTo).filter((p): p is string => p !== null).sort().at(-1) ?? null;
  return { format: 'camt053', accountIban: sections[0]?.accountIban ?? null, periodFrom: from, periodTo: to, sections, lines };
}

/**
 * The bank-local days a FrToDt covers wholly: a date-time at midnight starts its day, one at
 * 23:59:59 (or midnight of the next day) ends it; a time inside a day leaves that day partial.
 */
function wholeDays(period: unknown): Pick<StatementSection, 'firstWholeDay' | 'lastWholeDay'> {
  const shift = (day: string, by: number) => new Date(Date.parse(`${day}T00:00:00Z`) + by * 86_400_000).toISOString().slice(0, 10);
  const timeOf = (v: string) => v.slice(11, 19);
  const from = text(at(period, 'FrDtTm'));
  const to = text(at(period, 'ToDtTm'));
  return {
    firstWholeDay: from ? (timeOf(from) === '00:00:00' ? from.slice(0, 10) : shift(from.slice(0, 10), 1)) : null,
    lastWholeDay: to ? (timeOf(to) >= '23:59:59' ? to.slice(0, 10) : shift(to.slice(0, 10), -1)) : null,
  };
}

function balance(stmt: Node, codes: string[]): Balance | null {
  const bals = list(stmt['Bal']);
  for (const code of codes) {
    const bal = bals.find((b) => (text(at(b, 'Tp', 'CdOrPrtry', 'Cd')) ?? text(at(b, 'Tp', 'CdOrPrtry', 'Prtry'))) === code);
    const amount = bal ? amountOf(bal['Amt']) : null;
    if (bal && amount) return { cents: text(bal['CdtDbtInd']) === 'DBIT' ? -amount.cents : amount.cents, currency: amount.currency ?? text(at(stmt, 'Acct', 'Ccy')) ?? 'EUR' };
  }
  return null;
}

function isBooked(entry: Node): boolean {
  const status = text(entry['Sts']) ?? text(at(entry, 'Sts', 'Cd'));
  return !status || status === 'BOOK';
}

function directionOf(indicator: string | null, where: string): Direction {
  if (indicator !== 'CRDT' && indicator !== 'DBIT') throw new StatementFormatError(`${where}: entry with CdtDbtInd '${indicator ?? ''}'`);
  return indicator === 'CRDT' ? 'credit' : 'debit';
}

/** The entry as booked (what the balances move by), independent of how its details split it. */
function bookedAmount(entry: Node, accountCurrency: string | null): { cents: bigint; currency: string; direction: Direction } | null {
  if (!isBooked(entry)) return null;
  const amount = amountOf(entry['Amt'])!;
  return { cents: amount.cents, currency: amount.currency ?? accountCurrency ?? 'EUR', direction: text(entry['CdtDbtInd']) === 'CRDT' ? 'credit' : 'debit' };
}

type EntryLine = Omit<StatementLine, 'section' | 'entryIndex'>;

function entryLines(entry: Node, account: string | null, accountCurrency: string | null, statementDate: string | null, where: string): EntryLine[] {
  if (!isBooked(entry)) return [];
  const amount = amountOf(entry['Amt']);
  if (!amount) throw new StatementFormatError(`${where}: entry without Amt`);
  const currency = amount.currency ?? accountCurrency ?? 'EUR';
  const direction = directionOf(text(entry['CdtDbtInd']), where);
  // BookgDt is optional in the schema: an entry without it is dated by its value date, else by the statement.
  const bookingDate = dateOf(entry['BookgDt']) ?? dateOf(entry['ValDt']) ?? statementDate;
  if (!bookingDate) throw new StatementFormatError(`${where}: entry without BookgDt or ValDt in a statement without a date`);
  const entryRef = text(entry['AcctSvcrRef']) ?? text(entry['NtryRef']);
  const txs = list(entry['NtryDtls']).flatMap((d) => list(d['TxDtls']));
  const base = { accountIban: account, bookingDate, valueDate: dateOf(entry['ValDt']) } as const;
  // TxDtls/Amt (001.03 and later) is in the account's currency; AmtDtls/TxAmt is what was instructed.
  const txAmount = (tx: Node) => amountOf(tx['Amt']) ?? amountOf(at(tx, 'AmtDtls', 'TxAmt', 'Amt'));
  const txDirection = (tx: Node): Direction => {
    const ind = text(tx['CdtDbtInd']);
    return ind === 'CRDT' ? 'credit' : ind === 'DBIT' ? 'debit' : direction;
  };
  const amounts = txs.map(txAmount);
  // A batch with transactions of both directions is not split either: each line is booked in one direction.
  const whole =
    amounts.every((a, i) => a !== null && (a.currency ?? currency) === currency && txDirection(txs[i]!) === direction) &&
    amounts.reduce((sum, a) => sum + a!.cents, 0n) === amount.cents;
  if (txs.length > 1 && whole) {
    return txs.map((tx, i) => {
      const ref = text(at(tx, 'Refs', 'AcctSvcrRef')) ?? (entryRef ? `${entryRef}/${i + 1}` : null);
      return lineOf({ ...base, direction }, amounts[i]!.cents, currency, ref, tx, i);
    });
  }
  // One transaction that is the whole entry (or in another currency: an FX payment) lends the entry its references.
  const only = txs.length === 1 && (whole || (amounts[0]?.currency ?? currency) !== currency || amounts[0] === null) ? txs[0]! : null;
  const line = lineOf({ ...base, direction }, amount.cents, currency, entryRef, only ?? {}, 0);
  const additional = text(entry['AddtlNtryInf']);
  if (!only && txs.length > 0) {
    // Details for part of a batch: kept as evidence in the remittance text, but no reference of one
    // transaction is the whole entry's, so none becomes its SEPA reference.
    const parts = txs.map((tx, i) => `${text(at(tx, 'Refs', 'EndToEndId')) ?? '?'} ${amounts[i] ? amounts[i].cents.toString() : '?'}`);
    return [{ ...line, remittance: `${additional ? `${additional}; ` : ''}details of ${txs.length} transaction(s), not the whole entry: ${parts.join(', ')}`, sepaReference: null }];
  }
  return [{ ...line, remittance: line.remittance ?? present(additional) }];
}

function lineOf(
  base: Pick<StatementLine, 'accountIban' | 'bookingDate' | 'valueDate' | 'direction'>,
  cents: bigint,
  currency: string,
  bankReference: string | null,
  tx: Node,
  txIndex: number,
): EntryLine {
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
    ...base,
    amountCents: cents < 0n ? -cents : cents,
    currency,
    counterpartyIban: normalizeIban(text(at(parties, `${counterparty}Acct`, 'Id', 'IBAN'))),
    counterpartyName: partyName(at(parties, counterparty)),
    endToEndId,
    instructionId,
    bankReference,
    remittance,
    sepaReference: sepaReferenceOf({ endToEndId, instructionId, remittance }),
    txIndex,
  };
}
