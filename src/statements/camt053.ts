import { XMLParser } from 'fast-xml-parser';
import { decimalToCents } from './money.js';
import { normalizeIban, present, sepaReferenceOf } from './reference.js';
import { StatementFormatError, type ParsedStatement, type StatementLine } from './types.js';

type Node = Record<string, unknown>;

// parseTagValue false: every value stays the text the bank wrote ('0012.50' must not become 12.5,
// nor an IBAN of digits a number). Namespace prefixes go, so 001.02 and 001.08 read alike.
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  isArray: (name) => ['Stmt', 'Ntry', 'NtryDtls', 'TxDtls', 'Ustrd', 'Bal'].includes(name),
});

const node = (v: unknown): Node => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : {});
const list = (v: unknown): Node[] => (Array.isArray(v) ? v.map(node) : v === undefined ? [] : [node(v)]);

function text(v: unknown): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (v !== null && typeof v === 'object' && '#text' in v) return text((v as Node)['#text']);
  return null;
}

function at(v: unknown, ...path: string[]): unknown {
  let cur = v;
  for (const key of path) cur = node(cur)[key];
  return cur;
}

/** Dt (a date) or DtTm (a date-time) of a date choice element, as YYYY-MM-DD. */
function dateOf(choice: unknown): string | null {
  const value = text(at(choice, 'Dt')) ?? text(at(choice, 'DtTm'));
  return value ? value.slice(0, 10) : null;
}

function amountOf(amt: unknown): { cents: bigint; currency: string | null } | null {
  const value = text(amt);
  if (value === null) return null;
  return { cents: decimalToCents(value), currency: text(node(amt)['@_Ccy']) };
}

/** A party's name: <Nm> directly (001.02) or under <Pty> (001.08 and later). */
function partyName(party: unknown): string | null {
  return text(at(party, 'Nm')) ?? text(at(party, 'Pty', 'Nm'));
}

function instantOf(value: string | null, endOfDay: boolean): string | null {
  if (!value) return null;
  if (value.length === 10) {
    const d = new Date(`${value}T00:00:00Z`);
    if (endOfDay) d.setUTCDate(d.getUTCDate() + 1);
    return d.toISOString();
  }
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/**
 * ISO 20022 camt.053 (001.02 as German banks send it, and the later versions' shapes of Sts and
 * parties). One line per booked entry (Sts BOOK; pending and information-only entries are not
 * bookings); a batch entry whose transaction details carry their own amounts becomes one line per
 * transaction, so a payout inside a collective booking can still be matched.
 */
export function parseCamt053(xml: string): ParsedStatement {
  let doc: unknown;
  try {
    doc = parser.parse(xml, true);
  } catch (error) {
    throw new StatementFormatError(`not well-formed XML: ${(error as Error).message}`);
  }
  const root = at(doc, 'Document', 'BkToCstmrStmt');
  if (root === undefined || Object.keys(node(root)).length === 0) throw new StatementFormatError('XML without Document/BkToCstmrStmt: not a camt.053 statement');
  const statements = list(node(root)['Stmt']);
  const lines: StatementLine[] = [];
  let accountIban: string | null = null;
  let periodFrom: string | null = null;
  let periodTo: string | null = null;
  for (const stmt of statements) {
    const account = normalizeIban(text(at(stmt, 'Acct', 'Id', 'IBAN')) ?? text(at(stmt, 'Acct', 'Id', 'Othr', 'Id')));
    accountIban ??= account;
    const accountCurrency = text(at(stmt, 'Acct', 'Ccy'));
    const from = instantOf(text(at(stmt, 'FrToDt', 'FrDtTm')) ?? text(at(stmt, 'FrToDt', 'FrDt')), false);
    const to = instantOf(text(at(stmt, 'FrToDt', 'ToDtTm')) ?? text(at(stmt, 'FrToDt', 'ToDt')), true);
    if (from && (!periodFrom || from < periodFrom)) periodFrom = from;
    if (to && (!periodTo || to > periodTo)) periodTo = to;
    for (const entry of list(stmt['Ntry'])) lines.push(...entryLines(entry, account, accountCurrency));
  }
  return { format: 'camt053', accountIban, periodFrom, periodTo, lines };
}

function entryLines(entry: Node, account: string | null, accountCurrency: string | null): StatementLine[] {
  const status = text(entry['Sts']) ?? text(at(entry, 'Sts', 'Cd'));
  if (status && status !== 'BOOK') return [];
  const amount = amountOf(entry['Amt']);
  if (!amount) throw new StatementFormatError('camt.053 entry without Amt');
  const indicator = text(entry['CdtDbtInd']);
  if (indicator !== 'CRDT' && indicator !== 'DBIT') throw new StatementFormatError(`camt.053 entry with CdtDbtInd '${indicator ?? ''}'`);
  const direction = indicator === 'CRDT' ? 'credit' : 'debit';
  const bookingDate = dateOf(entry['BookgDt']) ?? dateOf(entry['ValDt']);
  if (!bookingDate) throw new StatementFormatError('camt.053 entry without BookgDt');
  const entryRef = text(entry['AcctSvcrRef']) ?? text(entry['NtryRef']);
  const txs = list(entry['NtryDtls']).flatMap((d) => list(d['TxDtls']));
  const split = txs.length > 1 && txs.every((tx) => amountOf(at(tx, 'AmtDtls', 'TxAmt', 'Amt')) ?? amountOf(tx['Amt']));
  const base = { accountIban: account, bookingDate, valueDate: dateOf(entry['ValDt']), direction } as const;
  if (!split) return [lineOf(base, amount.cents, amount.currency ?? accountCurrency, entryRef, txs[0] ?? {})];
  return txs.map((tx, i) => {
    const txAmount = amountOf(at(tx, 'AmtDtls', 'TxAmt', 'Amt')) ?? amountOf(tx['Amt']);
    const ref = text(at(tx, 'Refs', 'AcctSvcrRef')) ?? (entryRef ? `${entryRef}/${i + 1}` : null);
    return lineOf(base, txAmount?.cents ?? 0n, txAmount?.currency ?? amount.currency ?? accountCurrency, ref, tx);
  });
}

function lineOf(
  base: Pick<StatementLine, 'accountIban' | 'bookingDate' | 'valueDate' | 'direction'>,
  cents: bigint,
  currency: string | null,
  bankReference: string | null,
  tx: Node,
): StatementLine {
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
    currency: currency ?? 'EUR',
    counterpartyIban: normalizeIban(text(at(parties, `${counterparty}Acct`, 'Id', 'IBAN'))),
    counterpartyName: partyName(at(parties, counterparty)),
    endToEndId,
    instructionId,
    bankReference,
    remittance,
    sepaReference: sepaReferenceOf({ endToEndId, instructionId, remittance }),
  };
}
