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
const bal = (code: string, amount: string, ccy: string | null) =>
  `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt${ccy ? ` Ccy="${ccy}"` : ''}>${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-02</Dt></Dt></Bal>`;
const ntry = (amount: string, ccy: string | null, ref: string) =>
  `<Ntry><Amt${ccy ? ` Ccy="${ccy}"` : ''}>${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt><ValDt><Dt>2026-03-02</Dt></ValDt><AcctSvcrRef>${ref}</AcctSvcrRef></Ntry>`;

describe('CAMT.053 currency', () => {
  it('refuses an entry whose Amt names no Ccy in a statement without Acct/Ccy: no currency is assumed', () => {
    // camt053.ts:149 `amount.currency ?? c.accountCurrency ?? 'EUR'` (and :231 for balances).
    let result: string;
    try {
      result = parseStatement(camt('', ntry('12.50', null, 'R1'))).lines.map((l) => l.currency).join();
    } catch {
      result = 'refused';
    }
    expect(result).toBe('refused');
  });

  it('does not call a statement balanced when its bookings are in another currency than its balances', () => {
    // OPBD 100.00 EUR, a booked credit of 50.00 USD, CLBD 100.00 EUR: balanceCheck looks only at
    // the EUR bookings, so the statement is 'balanced' and its USD credit stored unquestioned.
    let state: string;
    try {
      state = parseStatement(camt(bal('OPBD', '100.00', 'EUR') + bal('CLBD', '100.00', 'EUR'), ntry('50.00', 'USD', 'R1'))).sections[0]!.balances!.state;
    } catch {
      state = 'refused';
    }
    expect(state).not.toBe('balanced');
  });
});

describe('MT940 :61: amount', () => {
  it("refuses '1.230,00' (a thousands separator SWIFT does not allow) instead of booking 1.23", () => {
    // STATEMENT_LINE takes '1.230' as the amount (decimalToCents accepts a third zero decimal) and
    // ',00NTRFNONREF' as the customer reference, which then becomes the line's instruction id.
    const text = ':20:STARTUMS\r\n:25:NL69INGB0123456789EUR\r\n:28C:00012/1\r\n:61:2603020302C1.230,00NTRFNONREF//B1\r\n:86:Miete Maerz\r\n-\r\n';
    let result: unknown;
    try {
      result = parseStatement(text).lines.map((l) => [l.amountCents, l.instructionId]);
    } catch (e) {
      result = (e as Error).message;
    }
    expect(result).toEqual(expect.stringMatching(/MT940 message 1/));
  });
});
