import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { importStatement } from '../../src/statements/import.js';
import { discrepancySource } from '../../src/reports/discrepancies.js';
import { fetchAll } from '../../src/reports/source.js';
import { pass, PROVIDER_IBAN, TERMS } from '../payout-reports/fixtures.js';

// camt-xml.ts currencyCode accepts a code in lower case ('gbp') and keeps it as written; the
// payouts report and the overview compare upper(currency), but findingCurrency reads the bank
// line's currency as stored, so the discrepancy report's currency column says 'gbp' and the XLSX
// (xlsx.ts moneyFormat: /^[A-Z]{3}$/) formats its amount with no currency at all.
describe('a GBP bank credit whose camt.053 writes Ccy="gbp"', () => {
  it('statement_credit_without_payout names the currency GBP in the discrepancy report', async () => {
    const db = await createTestDatabase('gbpsheet_lower_ccy', { poolMax: 4 });
    const camt = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-04T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><CreDtTm>2026-03-04T06:00:00</CreDtTm>
<Acct><Id><IBAN>GB82WEST12345698765432</IBAN></Id><Ccy>gbp</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>PRCD</Cd></CdOrPrtry></Tp><Amt Ccy="gbp">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-02</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="gbp">7.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-03</Dt></Dt></Bal>
<Ntry><Amt Ccy="gbp">7.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2026-03-03</Dt></BookgDt><ValDt><Dt>2026-03-03</Dt></ValDt><AcctSvcrRef>K7</AcctSvcrRef>
<NtryDtls><TxDtls><Refs><EndToEndId>PO2026030399999999</EndToEndId></Refs>
<RltdPties><Dbtr><Nm>BNPL Provider Ltd</Nm></Dbtr><DbtrAcct><Id><IBAN>${PROVIDER_IBAN}</IBAN></Id></DbtrAcct></RltdPties>
<RmtInf><Ustrd>Payout PO2026030399999999</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
</Stmt></BkToCstmrStmt></Document>`;
    await importStatement(db, 'sandbox', Buffer.from(camt), 'lower.xml');
    await pass(db, new Date('2026-03-20T12:00:00Z'), { terms: { ...TERMS, currency: 'GBP' } });
    const rows = (await fetchAll(discrepancySource(db, { status: 'all', kinds: ['statement_credit_without_payout'], currency: 'GBP' }), undefined, 100))!;
    expect(rows.map((r) => [r.amount, r.currency])).toEqual([['7.00', 'GBP']]);
  }, 60_000);
});
