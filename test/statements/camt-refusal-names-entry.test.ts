import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
useTestDatabase('camt_refusal_names_entry', (d) => (db = d));

const ntry = (amount: string, ind: string, ref: string) =>
  `<Ntry>${amount === '' ? '' : `<Amt Ccy="EUR">${amount}</Amt>`}<CdtDbtInd>${ind}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>` +
  `<BookgDt><Dt>2026-01-05</Dt></BookgDt><ValDt><Dt>2026-01-05</Dt></ValDt><AcctSvcrRef>${ref}</AcctSvcrRef></Ntry>`;

const camt = (entries: string) => `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-01-06T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S-2026-01-05</Id><CreDtTm>2026-01-06T06:00:00</CreDtTm><FrToDt><FrDtTm>2026-01-05T00:00:00</FrDtTm><ToDtTm>2026-01-05T23:59:59</ToDtTm></FrToDt>
<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>PRCD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1000.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-01-04</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1150.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-01-05</Dt></Dt></Bal>
${entries}</Stmt></BkToCstmrStmt></Document>`;

// docs/how-it-decides.md, Bank statements: a file refused is refused "naming the CSV row, the MT940
// message and field or the CAMT statement and entry". In a statement of hundreds of entries, the
// accountant must be told which entry is broken.
describe('camt.053 refusals name the entry', () => {
  it('an entry whose CdtDbtInd is neither CRDT nor DBIT: the refusal names entry 3', async () => {
    const file = camt(ntry('50.00', 'CRDT', 'A1') + ntry('50.00', 'CRDT', 'A2') + ntry('50.00', 'CRED', 'A3'));
    await expect(importStatement(db, 'sandbox', Buffer.from(file), 'bad-indicator.xml')).rejects.toThrow(/S-2026-01-05 entry 3: CdtDbtInd 'CRED' is neither CRDT nor DBIT$/);
    expect((await db.sql`select count(*)::int as n from statement_lines`)[0]?.['n']).toBe(0);
  });

  it('a balance whose CdtDbtInd is neither CRDT nor DBIT is refused naming the balance, not read as a credit', async () => {
    const file = camt(ntry('50.00', 'CRDT', 'C1') + ntry('50.00', 'CRDT', 'C2') + ntry('50.00', 'CRDT', 'C3')).replace(
      '<Amt Ccy="EUR">1150.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>',
      '<Amt Ccy="EUR">1150.00</Amt><CdtDbtInd>DEBIT</CdtDbtInd>',
    );
    await expect(importStatement(db, 'sandbox', Buffer.from(file), 'bad-balance.xml')).rejects.toThrow(/S-2026-01-05: balance CLBD: CdtDbtInd 'DEBIT' is neither CRDT nor DBIT$/);
    expect((await db.sql`select count(*)::int as n from statement_lines`)[0]?.['n']).toBe(0);
  });

  it('an entry without Amt: the refusal names entry 2', async () => {
    const file = camt(ntry('100.00', 'CRDT', 'B1') + ntry('', 'CRDT', 'B2') + ntry('50.00', 'CRDT', 'B3'));
    await expect(importStatement(db, 'sandbox', Buffer.from(file), 'no-amount.xml')).rejects.toThrow(/S-2026-01-05 entry 2: no Amt$/);
    expect((await db.sql`select count(*)::int as n from statement_lines`)[0]?.['n']).toBe(0);
  });
});
