import { expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * A paginated CAMT.053 (camt053.ts pageOf): a bank splits one day's statement over pages
 * (StmtPgntn/PgNb), each a <Stmt> carrying the statement's FrToDt. Read as statements of their own,
 * each claimed the whole day, so a page's booking was taken (overlap.ts rule 3, by the day) for an
 * equal booking of the page before (AcctSvcrRef is optional in camt.053) and dropped, although both
 * pages balance on their own. The pages are now one statement. docs/how-it-decides.md: "two equal bookings (two 4.50 card
 * payments on one day) stay two"; the non-negotiable: a statement's stored lines add up to the file.
 * Fixture written by hand from the camt.053.001.02 schema.
 */
let db: TestDatabase;
useTestDatabase('stmt_camt_pages', (d) => (db = d));

const IBAN = 'DE44500105175407324931';
const bal = (code: string, amt: string) =>
  `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${amt}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-05</Dt></Dt></Bal>`;
const card = (text: string) =>
  `<Ntry><Amt Ccy="EUR">4.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-05</Dt></BookgDt><ValDt><Dt>2026-03-05</Dt></ValDt>` +
  `<BkTxCd><Prtry><Cd>NMSC+005</Cd><Issr>DK</Issr></Prtry></BkTxCd><AddtlNtryInf>${text}</AddtlNtryInf></Ntry>`;
const page = (n: number, last: boolean, opening: string, closing: string, entry: string) =>
  `<Stmt><Id>2026-03-05-${n}</Id><ElctrncSeqNb>64</ElctrncSeqNb><StmtPgntn><PgNb>${n}</PgNb><LastPgInd>${last}</LastPgInd></StmtPgntn>` +
  `<CreDtTm>2026-03-06T06:00:00</CreDtTm><FrToDt><FrDtTm>2026-03-05T00:00:00</FrDtTm><ToDtTm>2026-03-05T23:59:59</ToDtTm></FrToDt>` +
  `<Acct><Id><IBAN>${IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>${bal('OPBD', opening)}${bal('CLBD', closing)}${entry}</Stmt>`;
const document = (stmts: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>` +
  `<GrpHdr><MsgId>MSG-64</MsgId><CreDtTm>2026-03-06T06:00:00</CreDtTm></GrpHdr>${stmts}</BkToCstmrStmt></Document>`;

it('stores both 4.50 card payments of a day whose camt.053 statement comes in two pages, each balanced', async () => {
  await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods cascade`;
  const xml = document(
    page(1, false, '100.00', '95.50', card('KARTENZAHLUNG BAECKEREI 08:02')) +
    page(2, true, '95.50', '91.00', card('KARTENZAHLUNG BAECKEREI 16:40')),
  );
  const r = await importStatement(db, 'sandbox', Buffer.from(xml), 'camt-pages.xml');
  expect(r.totals).toEqual([{ currency: 'EUR', creditCents: '0', debitCents: '900' }]);
  const [stored] = await db.sql<{ n: number; cents: string }[]>`
    select count(*)::int as n, coalesce(sum(amount_cents), 0)::text as cents from statement_lines where booking_date = '2026-03-05'`;
  // The file books 9.00 of debits on the day; the ledger must hold both card payments.
  expect(stored).toEqual({ n: 2, cents: '900' });
  expect(r).toMatchObject({ linesRead: 2, linesNew: 2, linesOverlap: 0 });
});

it('stores both when the two pages come in two files: a page without the others claims no day wholly', async () => {
  await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods cascade`;
  const first = await importStatement(db, 'sandbox', Buffer.from(document(page(1, false, '100.00', '95.50', card('KARTENZAHLUNG BAECKEREI 08:02')))), 'page-1.xml');
  const second = await importStatement(db, 'sandbox', Buffer.from(document(page(2, true, '95.50', '91.00', card('KARTENZAHLUNG BAECKEREI 16:40')))), 'page-2.xml');
  expect([first.linesNew, second.linesNew]).toEqual([1, 1]);
  // Both pages in one file after them: the same bookings, known, none stored again.
  const whole = await importStatement(db, 'sandbox', Buffer.from(document(
    page(1, false, '100.00', '95.50', card('KARTENZAHLUNG BAECKEREI 08:02')) + page(2, true, '95.50', '91.00', card('KARTENZAHLUNG BAECKEREI 16:40')),
  )), 'camt-pages.xml');
  expect(whole).toMatchObject({ linesRead: 2, linesNew: 0, linesOverlap: 2 });
  const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines`;
  expect(stored!.n).toBe(2);
});
