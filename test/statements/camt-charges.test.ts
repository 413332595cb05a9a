import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

// camt.053.001.02: one incoming SEPA credit of 100.00 from which the bank deducted 0.50 charges
// (TxDtls/Chrgs): the entry books 99.50, the transaction's AmtDtls state the 100.00 instructed and
// transferred. It is one transaction (no Btch, one TxDtls), not "details for part of a batch".
const CAMT = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-01-06T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><CreDtTm>2026-01-06T06:00:00</CreDtTm>
<FrToDt><FrDtTm>2026-01-05T00:00:00</FrDtTm><ToDtTm>2026-01-05T23:59:59</ToDtTm></FrToDt>
<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>PRCD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1000.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-01-04</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1099.50</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-01-05</Dt></Dt></Bal>
<Ntry><Amt Ccy="EUR">99.50</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2026-01-05</Dt></BookgDt><ValDt><Dt>2026-01-05</Dt></ValDt><AcctSvcrRef>A1</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls>
<Refs><EndToEndId>PO20260105123456</EndToEndId></Refs>
<AmtDtls><InstdAmt><Amt Ccy="EUR">100.00</Amt></InstdAmt><TxAmt><Amt Ccy="EUR">100.00</Amt></TxAmt></AmtDtls>
<Chrgs><Amt Ccy="EUR">0.50</Amt></Chrgs>
<RltdPties><Dbtr><Nm>BNPL Provider GmbH</Nm></Dbtr><DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct></RltdPties>
<RmtInf><Ustrd>Auszahlung PO20260105123456</Ustrd></RmtInf>
</TxDtls></NtryDtls></Ntry>
</Stmt></BkToCstmrStmt></Document>`;

describe('camt.053: a single transaction with charges deducted', () => {
  it('keeps its end-to-end reference, counterparty and remittance (the charges explain the amount)', () => {
    const p = parseStatement(Buffer.from(CAMT));
    expect(p.lines).toHaveLength(1);
    const l = p.lines[0]!;
    expect(l.amountCents).toBe(9950n);
    // Not "details of 1 transaction(s), not the whole entry", with no reference or party lent.
    expect({ e2e: l.endToEndId, ref: l.sepaReference, iban: l.counterpartyIban, name: l.counterpartyName, remittance: l.remittance }).toEqual({
      e2e: 'PO20260105123456', ref: 'PO20260105123456', iban: 'DE02120300000000202051', name: 'BNPL Provider GmbH', remittance: 'Auszahlung PO20260105123456; charges EUR 50',
    });
  });

  it('lends nothing when the charges stated do not make the difference: details of part of the entry', () => {
    const l = parseStatement(Buffer.from(CAMT.replace('<Chrgs><Amt Ccy="EUR">0.50</Amt></Chrgs>', '<Chrgs><Amt Ccy="EUR">0.40</Amt></Chrgs>'))).lines[0]!;
    expect([l.amountCents, l.sepaReference, l.counterpartyIban]).toEqual([9950n, null, null]);
    expect(l.remittance).toMatch(/details of 1 transaction\(s\), not the whole entry/);
  });

  it('imports an entry whose charge it cannot read as cents (another currency, three decimals), lending nothing', () => {
    const l = parseStatement(Buffer.from(CAMT.replace('<Chrgs><Amt Ccy="EUR">0.50</Amt></Chrgs>', '<Chrgs><Amt Ccy="BHD">0.195</Amt></Chrgs>'))).lines[0]!;
    expect([l.amountCents, l.sepaReference]).toEqual([9950n, null]);
  });
});
