import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { germanIban } from '../../src/statements/account.js';
import { parseStatement } from '../../src/statements/detect.js';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

// Two MT940 statements a German bank sends for one day, one after the other (test/statements/banks/
// two-a-day-*.sta, written for this project after the DFÜ-Abkommen MT940): :28C:00137/1 opens at
// 5,000.00 (dated the day before) and closes at 6,145.50 on 5 May 2026; :28C:00137/2 opens at that
// 6,145.50, dated 5 May too, and closes at 6,130.90 the same day. Each holds a 4.50 card payment
// without a reference (NONREF, no entry date) and a 100.00 standing order the bank books under the
// same reference DA-0007: equal in day and amount, they are two bookings, as both statements' balances say.
const ACCOUNT_FIELD = '76026000/0001234567';
const raw = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name)).toString('latin1');
/** The statement for account number `account` of bank 76026000: each test its own account, so none sees another's lines. */
const forAccount = (text: string, account: string) => Buffer.from(text.replaceAll(ACCOUNT_FIELD, `76026000/${account}`), 'latin1');
const first = raw('two-a-day-1.sta');
const second = raw('two-a-day-2.sta');
/** The same statement in other bytes: line feeds instead of CR LF. */
const lf = (text: string) => text.replace(/\r\n/g, '\n');

let db: TestDatabase;
useTestDatabase('statements_consecutive', (database) => (db = database));

type Sums = { lines: number; credit: bigint; debit: bigint };

/** What a file's lines book, as its reader reads them. */
function fileSums(bytes: Buffer): Sums {
  const p = parseStatement(bytes);
  const sum = (d: string) => p.lines.filter((l) => l.direction === d).reduce((s, l) => s + l.amountCents, 0n);
  return { lines: p.lines.length, credit: sum('credit'), debit: sum('debit') };
}

/** The lines stored by the import of `statementId` (bank_statements.id), or of the whole account. */
async function storedSums(where: { statementId: number } | { account: string }): Promise<Sums> {
  const [r] = await db.sql<{ lines: number; credit: string; debit: string }[]>`
    select count(*)::int as lines,
           coalesce(sum(amount_cents) filter (where direction = 'credit'), 0)::text as credit,
           coalesce(sum(amount_cents) filter (where direction = 'debit'), 0)::text as debit
    from statement_lines
    where ${'statementId' in where ? db.sql`statement_id = ${where.statementId}` : db.sql`account_iban = ${where.account}`}`;
  return { lines: r!.lines, credit: BigInt(r!.credit), debit: BigInt(r!.debit) };
}

const both = (a: Sums, b: Sums): Sums => ({ lines: a.lines + b.lines, credit: a.credit + b.credit, debit: a.debit + b.debit });

describe('two MT940 statements of one day, one after the other', () => {
  it('statement 1, then statement 2 (opening with 1’s closing balance): each file’s stored lines are its own lines, the equal card payment and the reused reference included', async () => {
    const [one, two] = [forAccount(first, '0000000001'), forAccount(second, '0000000001')];
    const a = await importStatement(db, 'sandbox', one, 'day-1.sta');
    expect(a).toMatchObject({ linesRead: 3, linesNew: 3, linesKnown: 0, linesOverlap: 0 });
    const b = await importStatement(db, 'sandbox', two, 'day-2.sta');
    expect(b).toMatchObject({ linesRead: 3, linesNew: 3, linesKnown: 0, linesOverlap: 0 });
    expect(await storedSums({ statementId: a.statementId })).toEqual(fileSums(one));
    expect(await storedSums({ statementId: b.statementId })).toEqual(fileSums(two));
    expect(fileSums(two)).toEqual({ lines: 3, credit: 8990n, debit: 10450n });
    expect(await storedSums({ account: germanIban('76026000', '0000000001') })).toEqual(both(fileSums(one), fileSums(two)));
  });

  it('statement 2, then statement 1 (closing with 2’s opening balance): both stored whole', async () => {
    const [one, two] = [forAccount(first, '0000000002'), forAccount(second, '0000000002')];
    const b = await importStatement(db, 'sandbox', two, 'day-2.sta');
    const a = await importStatement(db, 'sandbox', one, 'day-1.sta');
    expect([b.linesNew, a.linesNew, a.linesOverlap]).toEqual([3, 3, 0]);
    expect(await storedSums({ statementId: a.statementId })).toEqual(fileSums(one));
    expect(await storedSums({ statementId: b.statementId })).toEqual(fileSums(two));
    expect(await storedSums({ account: germanIban('76026000', '0000000002') })).toEqual(both(fileSums(one), fileSums(two)));
  });

  it('one file holding both statements: all six lines stored', async () => {
    const file = forAccount(first + second, '0000000003');
    const r = await importStatement(db, 'sandbox', file, 'day.sta');
    expect(r).toMatchObject({ statements: 2, linesRead: 6, linesNew: 6, linesOverlap: 0 });
    expect(await storedSums({ statementId: r.statementId })).toEqual(fileSums(file));
  });

  it('a re-sent statement 1 (other bytes, the same bytes, another statement number) and a file of 1 and 2 after 1 alone store nothing twice', async () => {
    const account = '0000000004';
    const [one, two] = [forAccount(first, account), forAccount(second, account)];
    expect(await importStatement(db, 'sandbox', one, 'day-1.sta')).toMatchObject({ linesNew: 3 });
    expect(await importStatement(db, 'sandbox', Buffer.from(lf(one.toString('latin1')), 'latin1'), 'day-1-lf.sta')).toMatchObject({ linesNew: 0, linesKnown: 3 });
    expect(await importStatement(db, 'sandbox', one, 'day-1-again.sta')).toMatchObject({ alreadyImported: true, linesNew: 0 });
    // The bank's copy under another number has the same balances: not a continuation, its day matched as before.
    const renumbered = Buffer.from(one.toString('latin1').replace(':28C:00137/1', ':28C:00138/1'), 'latin1');
    expect(await importStatement(db, 'sandbox', renumbered, 'day-1-copy.sta')).toMatchObject({ linesNew: 0, linesOverlap: 3 });
    const pair = forAccount(first + second, account);
    expect(await importStatement(db, 'sandbox', pair, 'day.sta')).toMatchObject({ statements: 2, linesNew: 3, linesKnown: 3, linesOverlap: 0 });
    expect(await importStatement(db, 'sandbox', Buffer.from(lf(two.toString('latin1')), 'latin1'), 'day-2-lf.sta')).toMatchObject({ linesNew: 0, linesKnown: 3 });
    expect(await importStatement(db, 'sandbox', Buffer.from(lf(pair.toString('latin1')), 'latin1'), 'day-lf.sta')).toMatchObject({ linesNew: 0, linesKnown: 6 });
    expect(await storedSums({ account: germanIban('76026000', account) })).toEqual(both(fileSums(one), fileSums(two)));
  });

  it('statement 1, the day’s whole statement (opening where 1 opens: not consecutive), then statement 2: nothing stored twice, 2’s bookings linked to the whole statement’s', async () => {
    const account = '0000000007';
    const bookings = (text: string) => text.split('\r\n').filter((l) => l.startsWith(':61:') || l.startsWith(':86:'));
    const day = [':20:STARTUMS', `:25:${ACCOUNT_FIELD}`, ':28C:00138/1', ':60F:C260504EUR5000,00', ...bookings(first), ...bookings(second), ':62F:C260505EUR6130,90', '-', ''].join('\r\n');
    const [one, whole, two] = [forAccount(first, account), forAccount(day, account), forAccount(second, account)];
    await importStatement(db, 'sandbox', one, 'day-1.sta');
    const w = await importStatement(db, 'sandbox', whole, 'day-whole.sta');
    expect(w).toMatchObject({ linesRead: 6, linesNew: 3, linesOverlap: 3 });
    const b = await importStatement(db, 'sandbox', two, 'day-2.sta');
    expect(b).toMatchObject({ linesRead: 3, linesNew: 0, linesOverlap: 3 });
    expect(await storedSums({ account: germanIban('76026000', account) })).toEqual(both(fileSums(one), fileSums(two)));
    // The standing order's reference DA-0007 is on the whole statement's first entry too, linked to statement 1's booking.
    const holders = await db.sql<{ statement_id: string }[]>`
      select distinct l.statement_id::text from statement_entries e join statement_lines l on l.environment = e.environment and l.entry_key = e.lines_entry_key
      where e.statement_id = ${b.statementId}`;
    expect(holders).toEqual([{ statement_id: String(w.statementId) }]);
  });

  it('each statement’s opening and closing balances are kept: amount, currency, date and field', async () => {
    const r = await importStatement(db, 'production', forAccount(first + second, '0000000005'), 'day.sta');
    const kept = await db.sql`
      select section_index, account_iban, opening_kind, opening_date, opening_currency, opening_cents::text, closing_kind, closing_date,
             closing_currency, closing_cents::text, balanced
      from statement_balances where statement_id = ${r.statementId} order by section_index`;
    const account = germanIban('76026000', '0000000005');
    expect(kept).toEqual([
      { section_index: 0, account_iban: account, opening_kind: '60F', opening_date: '2026-05-04', opening_currency: 'EUR', opening_cents: '500000',
        closing_kind: '62F', closing_date: '2026-05-05', closing_currency: 'EUR', closing_cents: '614550', balanced: true },
      { section_index: 1, account_iban: account, opening_kind: '60F', opening_date: '2026-05-05', opening_currency: 'EUR', opening_cents: '614550',
        closing_kind: '62F', closing_date: '2026-05-05', closing_currency: 'EUR', closing_cents: '613090', balanced: true },
    ]);
  });

  it('statement 1 stored without its balances (before migration 0027): statement 2’s equal bookings are matched by the day and reference, as then', async () => {
    const account = '0000000006';
    const a = await importStatement(db, 'sandbox', forAccount(first, account), 'day-1.sta');
    await db.sql`delete from statement_balances where statement_id = ${a.statementId}`;
    expect(await importStatement(db, 'sandbox', forAccount(second, account), 'day-2.sta')).toMatchObject({ linesNew: 1, linesOverlap: 2 });
  });
});

// The same day in CAMT.053 (written for this project after the camt.053.001.02 schema): a bank that
// sends one day in two statements (ElctrncSeqNb 64 and 65), each with the whole day as its FrToDt;
// 64 opens with the day before's closing (PRCD), 65 opens (OPBD) with 64's CLBD of that day. Each
// holds a 4.50 card payment without AcctSvcrRef.
const CAMT_IBAN = 'DE02120300000000202051';
const camtBalance = (code: string, amount: string, day: string) =>
  `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${day}</Dt></Dt></Bal>`;
const cardPayment = (text: string) =>
  `<Ntry><Amt Ccy="EUR">4.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-05</Dt></BookgDt><ValDt><Dt>2026-03-05</Dt></ValDt>` +
  `<AddtlNtryInf>${text}</AddtlNtryInf></Ntry>`;
interface CamtStatement { seq: number; opening: [code: string, amount: string, day: string]; closing: string; entries: string; page?: [number, boolean] }
const camtStatement = (iban: string, s: CamtStatement) =>
  `<Stmt><Id>2026-03-05-${s.seq}${s.page ? `-${s.page[0]}` : ''}</Id><ElctrncSeqNb>${s.seq}</ElctrncSeqNb>` +
  (s.page ? `<StmtPgntn><PgNb>${s.page[0]}</PgNb><LastPgInd>${s.page[1]}</LastPgInd></StmtPgntn>` : '') +
  `<CreDtTm>2026-03-06T06:00:00</CreDtTm><FrToDt><FrDtTm>2026-03-05T00:00:00</FrDtTm><ToDtTm>2026-03-05T23:59:59</ToDtTm></FrToDt>` +
  `<Acct><Id><IBAN>${iban}</IBAN></Id><Ccy>EUR</Ccy></Acct>${camtBalance(...s.opening)}${camtBalance('CLBD', s.closing, '2026-03-05')}${s.entries}</Stmt>`;
const camtFile = (messageId: string, iban: string, ...statements: CamtStatement[]) => Buffer.from(
  `<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>` +
  `<GrpHdr><MsgId>${messageId}</MsgId><CreDtTm>2026-03-06T06:00:00</CreDtTm></GrpHdr>${statements.map((s) => camtStatement(iban, s)).join('')}</BkToCstmrStmt></Document>`);
const camtFirst: CamtStatement = { seq: 64, opening: ['PRCD', '100.00', '2026-03-04'], closing: '95.50', entries: cardPayment('KARTENZAHLUNG BAECKEREI 08:02') };
const camtSecond: CamtStatement = { seq: 65, opening: ['OPBD', '95.50', '2026-03-05'], closing: '91.00', entries: cardPayment('KARTENZAHLUNG BAECKEREI 16:40') };
/** An IBAN of its own for each test (German check digits, account number `n`), so none sees another's lines. */
const camtAccount = (n: string) => germanIban('12030000', n);

describe('two CAMT.053 statements of one day, one after the other', () => {
  it('statement 64, then 65 (opening with 64’s CLBD): both card payments stored, and the balances kept with their codes', async () => {
    const iban = camtAccount('0000000011');
    const [one, two] = [camtFile('MSG-64', iban, camtFirst), camtFile('MSG-65', iban, camtSecond)];
    const a = await importStatement(db, 'sandbox', one, 'day-64.xml');
    const b = await importStatement(db, 'sandbox', two, 'day-65.xml');
    expect([a.linesNew, b.linesNew, b.linesOverlap]).toEqual([1, 1, 0]);
    expect(await storedSums({ account: iban })).toEqual(both(fileSums(one), fileSums(two)));
    expect(await storedSums({ account: iban })).toEqual({ lines: 2, credit: 0n, debit: 900n });
    const kept = await db.sql`
      select opening_kind, opening_date, opening_cents::text, closing_kind, closing_date, closing_cents::text, balanced
      from statement_balances where statement_id in (${a.statementId}, ${b.statementId}) order by statement_id`;
    expect(kept).toEqual([
      { opening_kind: 'PRCD', opening_date: '2026-03-04', opening_cents: '10000', closing_kind: 'CLBD', closing_date: '2026-03-05', closing_cents: '9550', balanced: true },
      { opening_kind: 'OPBD', opening_date: '2026-03-05', opening_cents: '9550', closing_kind: 'CLBD', closing_date: '2026-03-05', closing_cents: '9100', balanced: true },
    ]);
  });

  it('statement 65, then 64: both stored', async () => {
    const iban = camtAccount('0000000012');
    const b = await importStatement(db, 'sandbox', camtFile('MSG-65', iban, camtSecond), 'day-65.xml');
    const a = await importStatement(db, 'sandbox', camtFile('MSG-64', iban, camtFirst), 'day-64.xml');
    expect([b.linesNew, a.linesNew, a.linesOverlap]).toEqual([1, 1, 0]);
    expect(await storedSums({ account: iban })).toEqual({ lines: 2, credit: 0n, debit: 900n });
  });

  it('65 in two pages, the first opening with 64’s CLBD: the statement of pages is consecutive with 64 by its first opening and last closing', async () => {
    const iban = camtAccount('0000000013');
    await importStatement(db, 'sandbox', camtFile('MSG-64', iban, camtFirst), 'day-64.xml');
    const pages = camtFile('MSG-65', iban,
      { ...camtSecond, closing: '95.50', entries: '', page: [1, false] },
      { ...camtSecond, opening: ['OPBD', '95.50', '2026-03-05'], page: [2, true] });
    expect(await importStatement(db, 'sandbox', pages, 'day-65-pages.xml')).toMatchObject({ linesNew: 1, linesOverlap: 0 });
    expect(await storedSums({ account: iban })).toEqual({ lines: 2, credit: 0n, debit: 900n });
  });

  it('64 sent again in another message (the same balances: not a continuation) adds nothing; 64 and 65 in one file after them add nothing', async () => {
    const iban = camtAccount('0000000014');
    await importStatement(db, 'sandbox', camtFile('MSG-64', iban, camtFirst), 'day-64.xml');
    await importStatement(db, 'sandbox', camtFile('MSG-65', iban, camtSecond), 'day-65.xml');
    expect(await importStatement(db, 'sandbox', camtFile('MSG-64-COPY', iban, { ...camtFirst, seq: 66 }), 'day-64-copy.xml')).toMatchObject({ linesNew: 0 });
    expect(await importStatement(db, 'sandbox', camtFile('MSG-BOTH', iban, camtFirst, camtSecond), 'day-both.xml')).toMatchObject({ linesNew: 0 });
    expect(await storedSums({ account: iban })).toEqual({ lines: 2, credit: 0n, debit: 900n });
  });
});
