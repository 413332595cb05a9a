import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Balances of a CAMT.053 beyond one OPBD and one CLBD (camt053.ts endsOf), written by hand from the
 * camt.053.001.02 schema and the Finnish banks' ISO 20022 account statement guide:
 * - a paginated statement whose pages open and close with interim booked balances (ITBD) where
 *   they do not open or close the statement: page 1 OPBD to ITBD, the next ITBD to ITBD, the last
 *   ITBD to CLBD, the ITBD's subtype OIBD (opening) or CIBD (closing) where the bank names it;
 * - a statement of several days that states a closing balance for each day.
 * Before, the pages were imported unchecked (a page that did not add up was stored as if it did,
 * and a statement continuing them lost an equal booking), and the several-day statement was
 * refused as not balancing against its first day's CLBD.
 */
const IBAN = 'DE44500105175407324931';
const bal = (code: string, amount: string, day: string, subtype?: string) =>
  `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry>${subtype ? `<SubTp><Cd>${subtype}</Cd></SubTp>` : ''}</Tp>` +
  `<Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${day}</Dt></Dt></Bal>`;
const card = (amount: string, day: string, text: string) =>
  `<Ntry><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>${day}</Dt></BookgDt><ValDt><Dt>${day}</Dt></ValDt>` +
  `<BkTxCd><Prtry><Cd>NMSC+005</Cd><Issr>DK</Issr></Prtry></BkTxCd><AddtlNtryInf>${text}</AddtlNtryInf></Ntry>`;
const period = (from: string, to: string) => `<FrToDt><FrDtTm>${from}T00:00:00</FrDtTm><ToDtTm>${to}T23:59:59</ToDtTm></FrToDt>`;
const acct = `<Acct><Id><IBAN>${IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>`;
const page = (seq: number, n: number, last: boolean, balances: string, entries: string) =>
  `<Stmt><Id>2026-03-05-${seq}-${n}</Id><ElctrncSeqNb>${seq}</ElctrncSeqNb><StmtPgntn><PgNb>${n}</PgNb><LastPgInd>${last}</LastPgInd></StmtPgntn>` +
  `<CreDtTm>2026-03-06T06:00:00</CreDtTm>${period('2026-03-05', '2026-03-05')}${acct}${balances}${entries}</Stmt>`;
const statement = (seq: number, from: string, to: string, balances: string, entries: string) =>
  `<Stmt><Id>S-${seq}</Id><ElctrncSeqNb>${seq}</ElctrncSeqNb><CreDtTm>2026-03-09T06:00:00</CreDtTm>${period(from, to)}${acct}${balances}${entries}</Stmt>`;
const document = (stmts: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>` +
  `<GrpHdr><MsgId>MSG-1</MsgId><CreDtTm>2026-03-06T06:00:00</CreDtTm></GrpHdr>${stmts}</BkToCstmrStmt></Document>`;
const D = '2026-03-05';

/** Three pages of statement 64: 100.00, less 4.50 on each page, to 86.50. */
const threePages = (middleClosing = '91.00') =>
  page(64, 1, false, bal('OPBD', '100.00', D) + bal('ITBD', '95.50', D), card('4.50', D, 'KARTENZAHLUNG 08:02')) +
  page(64, 2, false, bal('ITBD', '95.50', D) + bal('ITBD', middleClosing, D), card('4.50', D, 'KARTENZAHLUNG 12:10')) +
  page(64, 3, true, bal('ITBD', middleClosing, D) + bal('CLBD', '86.50', D), card('4.50', D, 'KARTENZAHLUNG 16:40'));

const refusal = (xml: string): string => {
  try {
    parseStatement(xml);
    return 'read';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('a CAMT.053 statement in pages with interim balances (ITBD)', () => {
  it('checks the pages against their interim balances: a statement whose pages add up is balanced', () => {
    const parsed = parseStatement(document(threePages()));
    expect(parsed.sections).toHaveLength(1);
    expect(parsed.sections[0]!.balances).toEqual({ state: 'balanced' });
    expect(parsed.lines.map((l) => l.amountCents)).toEqual([450n, 450n, 450n]);
  });

  it('refuses a statement one of whose pages does not add up to its interim balances, naming the difference', () => {
    // Page 2 books 4.50 but its interim balances move by 5.50; page 3 continues from them.
    expect(refusal(document(threePages('90.00')))).toMatch(/does not balance.*difference -1\.00/);
  });

  it('takes an ITBD of subtype OIBD as the opening and CIBD as the closing, in whatever order the page states them', () => {
    const xml = document(
      page(64, 1, false, bal('OPBD', '100.00', D) + bal('ITBD', '95.50', D, 'CIBD'), card('4.50', D, 'A')) +
      page(64, 2, true, bal('CLBD', '91.00', D) + bal('ITBD', '95.50', D, 'OIBD'), card('4.50', D, 'B')),
    );
    expect(parseStatement(xml).sections[0]!.balances).toEqual({ state: 'balanced' });
  });

  it('leaves a page whose only balance is one ITBD unchecked instead of taking it for both ends', () => {
    const xml = document(page(64, 2, false, bal('ITBD', '95.50', D), card('4.50', D, 'B')));
    expect(parseStatement(xml).sections[0]!.balances).toMatchObject({ state: 'unchecked' });
  });

  it('reads no ITBD as an end of a statement that is not paginated', () => {
    const xml = document(statement(70, D, D, bal('OPBD', '100.00', D) + bal('ITBD', '90.00', D), card('4.50', D, 'A')));
    expect(parseStatement(xml).sections[0]!.balances).toMatchObject({ state: 'unchecked' });
  });
});

describe('a CAMT.053 statement of several days with a closing balance for each day', () => {
  const days = (closingOfLast: string) =>
    document(statement(71, '2026-03-05', '2026-03-07',
      bal('OPBD', '100.00', '2026-03-05') + bal('CLBD', '95.50', '2026-03-05') + bal('OPBD', '95.50', '2026-03-06') +
      bal('CLBD', '91.00', '2026-03-06') + bal('OPBD', '91.00', '2026-03-07') + bal('CLBD', closingOfLast, '2026-03-07'),
      card('4.50', '2026-03-05', 'A') + card('4.50', '2026-03-06', 'B') + card('4.50', '2026-03-07', 'C')));

  it('checks its first day\'s opening and bookings against its last day\'s closing balance', () => {
    const parsed = parseStatement(days('86.50'));
    expect(parsed.sections[0]!.balances).toEqual({ state: 'balanced' });
    expect(parsed.sections[0]!.ends).toEqual({
      opening: { cents: 10000n, currency: 'EUR', date: '2026-03-05', kind: 'OPBD' },
      closing: { cents: 8650n, currency: 'EUR', date: '2026-03-07', kind: 'CLBD' },
    });
  });

  it('still refuses one whose bookings do not reach its last closing balance', () => {
    expect(refusal(days('87.50'))).toMatch(/does not balance.*difference 1\.00/);
  });

  it('takes the latest CLBD by its date, not by where the bank states it', () => {
    const xml = document(statement(72, '2026-03-05', '2026-03-06',
      bal('CLBD', '91.00', '2026-03-06') + bal('OPBD', '100.00', '2026-03-05') + bal('CLBD', '95.50', '2026-03-05'),
      card('4.50', '2026-03-05', 'A') + card('4.50', '2026-03-06', 'B')));
    expect(parseStatement(xml).sections[0]!.balances).toEqual({ state: 'balanced' });
  });
});

describe('a day in two CAMT.053 statements, the first in pages with interim balances', () => {
  let db: TestDatabase;
  useTestDatabase('stmt_camt_interim', (d) => (db = d));

  it('stores the second statement\'s card payment equal to one of the first\'s pages', async () => {
    await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods, statement_balances cascade`;
    const first = await importStatement(db, 'sandbox', Buffer.from(document(threePages())), 'camt-64.xml');
    // Statement 65 opens with 64's closing balance and books another 4.50 card payment that day.
    const second = await importStatement(db, 'sandbox', Buffer.from(document(
      statement(65, D, D, bal('OPBD', '86.50', D) + bal('CLBD', '82.00', D), card('4.50', D, 'KARTENZAHLUNG 18:15')),
    )), 'camt-65.xml');
    expect([first.linesNew, second.linesNew]).toEqual([3, 1]);
    const [stored] = await db.sql<{ n: number; cents: string }[]>`
      select count(*)::int as n, sum(amount_cents)::text as cents from statement_lines where booking_date = ${D}`;
    // Four card payments of 4.50 are in the two files: 18.00 of debits on the day.
    expect(stored).toEqual({ n: 4, cents: '1800' });
  });
});
