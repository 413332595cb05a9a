import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

const camt = (balances: string, entries: string) => `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-03T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><ElctrncSeqNb>12</ElctrncSeqNb><CreDtTm>2026-03-03T06:00:00</CreDtTm>
<FrToDt><FrDtTm>2026-03-02T00:00:00</FrDtTm><ToDtTm>2026-03-02T23:59:59</ToDtTm></FrToDt>
<Acct><Id><IBAN>DE44500105175407324931</IBAN></Id></Acct>
${balances}
${entries}
</Stmt></BkToCstmrStmt></Document>`;
const bal = (code: string, amount: string, ccy: string) =>
  `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="${ccy}">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-02</Dt></Dt></Bal>`;
const ntry = (amount: string, ccy: string, ref: string) =>
  `<Ntry><Amt Ccy="${ccy}">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt><ValDt><Dt>2026-03-02</Dt></ValDt><AcctSvcrRef>${ref}</AcctSvcrRef></Ntry>`;

describe('totals.ts: bookings in another currency than the (first) balances', () => {
  it('a multi-currency account statement (no Acct/Ccy, OPBD/CLBD per currency, each currency balanced) is read, not refused', () => {
    const text = camt(
      bal('OPBD', '100.00', 'EUR') + bal('CLBD', '150.00', 'EUR') + bal('OPBD', '10.00', 'USD') + bal('CLBD', '60.00', 'USD'),
      ntry('50.00', 'EUR', 'R1') + ntry('50.00', 'USD', 'R2'),
    );
    let result: unknown;
    try {
      result = parseStatement(text).lines.map((l) => [l.amountCents, l.currency]);
    } catch (e) {
      result = (e as Error).message;
    }
    expect(result).toEqual([
      [5000n, 'EUR'],
      [5000n, 'USD'],
    ]);
  });
});
