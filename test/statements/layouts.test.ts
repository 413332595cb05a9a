import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';
import { StatementFormatError, type ParsedStatement } from '../../src/statements/types.js';

// Layouts issue 25 found refused or misread, each in a fixture written for this project after the
// bank's published layout (test/statements/banks/); every line is asserted field by field.
const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));

type Row = [booking: string, value: string | null, cents: bigint, direction: 'credit' | 'debit', currency: string, e2e: string | null,
  counterpartyIban: string | null, counterpartyName: string | null, remittance: string | null, bankReference: string | null, sepa: string | null];

function expectLines(p: ParsedStatement, rows: Row[]): void {
  const actual = p.lines.map((l): Row => [l.bookingDate, l.valueDate, l.amountCents, l.direction, l.currency, l.endToEndId, l.counterpartyIban,
    l.counterpartyName, l.remittance, l.bankReference, l.sepaReference]);
  expect(actual).toEqual(rows);
}

const refusal = (text: string, options = {}): string => {
  try {
    parseStatement(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(StatementFormatError);
    return (error as Error).message;
  }
  throw new Error('not refused');
};

describe('MT940 layouts', () => {
  it("ASN: ':28C:0000' continued by '0' on the next line is statement 00000, and the statement balances", () => {
    const p = parseStatement(file('asn.sta'));
    expect(p.sections).toHaveLength(1);
    expect(p.sections[0]).toMatchObject({
      identity: 'mt940|NL81ASNB0708271234|00000|2025-01-01|100000|2025-01-03|112450|EUR',
      accountIban: 'NL81ASNB0708271234',
      periodFrom: '2025-01-02T00:00:00.000Z',
      periodTo: '2025-01-04T00:00:00.000Z',
      balances: { state: 'balanced' },
    });
  });

  it("ASN: '/' inside Dutch structured values: EREF, REMI, MARF run to the next known code; STRD/CUR/ keeps the creditor reference whole", () => {
    expectLines(parseStatement(file('asn.sta')), [
      ['2025-01-02', '2025-01-02', 150_00n, 'credit', 'EUR', '1755481/5570/20250102', 'NL44RABO0123456789', 'J. Jansen', 'Factuur 2025/0001 termijn 1/2', '20250102001', '1755481/5570/20250102'],
      ['2025-01-03', '2025-01-03', 25_50n, 'debit', 'EUR', 'INC/2025/01/778899', 'NL20INGB0001234567', 'Energie B.V.', 'RF18539007547034', '20250103001', 'INC/2025/01/778899'],
    ]);
  });

  it("ING: '/' in EREF, in a CNTP name ('A/B Kantoorartikelen', between BIC and city) and in REMI/USTD", () => {
    expectLines(parseStatement(file('ing-unchecked.sta')), [
      ['2025-03-01', '2025-03-01', 1200_00n, 'credit', 'EUR', 'PO2025030100000007', 'NL02ABNA0123456789', 'BNPL Provider B.V.', 'Auszahlung 2025-03/1', '00000000002001', 'PO2025030100000007'],
      ['2025-03-01', '2025-03-01', 12_34n, 'debit', 'EUR', 'K/2025/03/0042', 'NL20INGB0001234567', 'A/B Kantoorartikelen', 'Factuur 2025-0042', '00000000002002', 'K/2025/03/0042'],
      ['2025-03-02', '2025-03-02', 45_00n, 'debit', 'EUR', null, 'NL44RABO0123456789', 'J. Jansen', 'Huur maart', '00000000002003', null],
    ]);
  });

  it('ING: a message with an opening balance and only a :65F: forward balance, and one with no balances, are read with their balances unchecked', () => {
    const p = parseStatement(file('ing-unchecked.sta'));
    expect(p.sections).toEqual([
      {
        identity: 'mt940|NL69INGB0123456789|00061|2025-02-28|50000|||EUR|2025-03-01|2025-03-01',
        accountIban: 'NL69INGB0123456789', firstWholeDay: null, lastWholeDay: null,
        periodFrom: '2025-03-01T00:00:00.000Z', periodTo: '2025-03-02T00:00:00.000Z',
        booked: new Map([['EUR', { credit: 1200_00n, debit: 12_34n }]]),
        balances: { state: 'unchecked', reason: 'no closing balance (:62F:/:62M:)' },
        ends: { opening: { cents: 500_00n, currency: 'EUR', date: '2025-02-28', kind: '60F' }, closing: null },
      },
      {
        identity: 'mt940|NL69INGB0123456789|00062|||||EUR|2025-03-02|2025-03-02',
        accountIban: 'NL69INGB0123456789', firstWholeDay: null, lastWholeDay: null,
        periodFrom: '2025-03-02T00:00:00.000Z', periodTo: '2025-03-03T00:00:00.000Z',
        booked: new Map([['EUR', { credit: 0n, debit: 45_00n }]]),
        balances: { state: 'unchecked', reason: 'no opening balance (:60F:/:60M:) and no closing balance (:62F:/:62M:)' },
        ends: { opening: null, closing: null },
      },
    ]);
    expect(p.lines.map((l) => [l.section, l.entryIndex])).toEqual([[0, 0], [0, 1], [1, 0]]);
  });

  const message = (balances: { opening?: string; closing?: string; other?: string }, account = 'NL69INGB0123456789EUR') =>
    [':20:X', `:25:${account}`, ':28C:1', balances.opening, ':61:2503010301C10,00NTRFNONREF', ':86:Test', balances.closing, balances.other, '-']
      .filter((l) => l !== undefined).join('\n');

  it('takes the currency of a message without opening or closing balance from a :64:/:65: balance, and refuses one that names none', () => {
    const p = parseStatement(message({ other: ':64:C250301CHF10,00' }, 'CH9300762011623852957'));
    expect(p.lines.map((l) => [l.currency, l.amountCents, l.direction])).toEqual([['CHF', 10_00n, 'credit']]);
    expect(refusal(message({}, 'CH9300762011623852957'))).toBe(
      "MT940 message 1: no balance (:60x:, :62x:, :64:, :65:) and no currency after the :25: account: the bookings' currency is unknown",
    );
  });

  it('refuses a message with neither balances nor bookings, and still refuses balances present that disagree', () => {
    expect(refusal(':20:X\n:25:NL69INGB0123456789EUR\n:28C:1\n:86:nothing\n-\n:20:Y\n:25:NL69INGB0123456789EUR\n:60F:C250301EUR0,00\n:61:2503010301C1,00NTRF\n-'))
      .toBe('MT940 message 1: neither balances (:60F:/:60M:, :62F:/:62M:) nor bookings (:61:)');
    expect(refusal(message({ opening: ':60F:C250228EUR100,00', closing: ':62F:C250301EUR100,00' }))).toBe(
      'MT940 message 1 (:28C: 1) does not balance: opening 100.00 + credits 10.00 - debits 0.00 = 110.00 EUR, but the closing balance is 100.00 (difference -10.00)',
    );
  });

  it('with acceptUnbalanced reads a statement that does not balance, recording the difference; pages add their differences', () => {
    const p = parseStatement(message({ opening: ':60F:C250228EUR100,00', closing: ':62F:C250301EUR100,00' }), { acceptUnbalanced: true });
    expect(p.lines.map((l) => l.amountCents)).toEqual([10_00n]);
    expect(p.sections[0]!.balances).toEqual({
      state: 'unbalanced', currency: 'EUR', openingCents: 100_00n, creditCents: 10_00n, debitCents: 0n, closingCents: 100_00n, differenceCents: -10_00n,
      message: 'MT940 message 1 (:28C: 1) does not balance: opening 100.00 + credits 10.00 - debits 0.00 = 110.00 EUR, but the closing balance is 100.00 (difference -10.00)',
    });
    const pages = [message({ opening: ':60F:C250228EUR100,00', closing: ':62M:C250301EUR105,00' }), message({ opening: ':60M:C250301EUR105,00', closing: ':62F:C250301EUR120,00' })].join('\n');
    const two = parseStatement(pages, { acceptUnbalanced: true });
    expect(two.sections).toHaveLength(1);
    expect(two.sections[0]!.balances).toMatchObject({ state: 'unbalanced', openingCents: 100_00n, creditCents: 20_00n, closingCents: 120_00n, differenceCents: 0n });
    // A page that does not continue the one before is a page missing or repeated: refused, accepted or not.
    const broken = [message({ opening: ':60F:C250228EUR100,00', closing: ':62M:C250301EUR110,00' }), message({ opening: ':60M:C250301EUR999,00', closing: ':62F:C250301EUR1009,00' })].join('\n');
    expect(refusal(broken, { acceptUnbalanced: true })).toMatch(/^MT940 message 2: :60M: opening balance 999.00 EUR does not continue/);
  });
});

describe('CAMT.053 layouts', () => {
  it('Lithuanian 001.08: entries without BookgDt and ValDt take the last day of FrToDt (a ToDtTm at midnight ends the day before), else GrpHdr/CreDtTm', () => {
    const p = parseStatement(file('camt053-lt.xml'));
    expectLines(p, [
      ['2025-03-03', null, 100_00n, 'credit', 'EUR', 'PO2025030300000011', 'LT601010012345678901', 'UAB Pirkejas', 'Saskaita SF-2025/114', '2025030300001', 'PO2025030300000011'],
      ['2025-03-03', null, 2_50n, 'debit', 'EUR', null, null, null, 'Komisinis mokestis', '2025030300002', null],
      ['2025-03-05', null, 50_00n, 'credit', 'EUR', null, 'LT647044001231465456', 'Jonas Jonaitis', 'Avansas', '2025030500003', null],
    ]);
    expect(p.lines.every((l) => l.accountIban === 'LT121000011101001000')).toBe(true);
  });

  it('a statement with only CLBD is read with its balances unchecked; one with OPBD and CLBD is checked', () => {
    const p = parseStatement(file('camt053-lt.xml'));
    expect(p.sections.map((s) => s.balances)).toEqual([{ state: 'balanced' }, { state: 'unchecked', reason: 'no opening balance (OPBD/PRCD)' }]);
    expect(p.sections.map((s) => [s.periodFrom, s.periodTo])).toEqual([
      ['2025-03-02T22:00:00.000Z', '2025-03-03T22:00:00.000Z'],
      ['2025-03-05T00:00:00.000Z', '2025-03-06T00:00:00.000Z'],
    ]);
  });

  const camt = (acct: string, ntry = '<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2025-03-03</Dt></BookgDt></Ntry>') =>
    `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>M</MsgId><CreDtTm>2025-03-05T06:00:00</CreDtTm></GrpHdr>` +
    `<Stmt><Id>S-1</Id>${acct}${ntry}</Stmt></BkToCstmrStmt></Document>`;

  it('refuses a statement without Acct, or with an Acct naming no account, saying what is missing', () => {
    expect(refusal(camt(''))).toBe('camt.053 statement S-1: no Acct: the statement names no account (Acct/Id/IBAN or Acct/Id/Othr/Id)');
    expect(refusal(camt('', ''))).toBe('camt.053 statement S-1: no Acct: the statement names no account (Acct/Id/IBAN or Acct/Id/Othr/Id)');
    expect(refusal(camt('<Acct><Ccy>EUR</Ccy></Acct>'))).toBe('camt.053 statement S-1: Acct without Id/IBAN or Id/Othr/Id: the statement names no account');
    expect(parseStatement(camt('<Acct><Id><Othr><Id>0012345678</Id></Othr></Id></Acct>')).accountIban).toBe('0012345678');
  });

  it('with acceptUnbalanced reads a CAMT statement whose CLBD disagrees, recording the difference', () => {
    const bal = (code: string, amount: string) => `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2025-03-03</Dt></Dt></Bal>`;
    const xml = camt(`<Acct><Id><IBAN>LT121000011101001000</IBAN></Id></Acct>${bal('OPBD', '5.00')}${bal('CLBD', '5.00')}`);
    expect(refusal(xml)).toBe('camt.053 statement S-1 does not balance: opening 5.00 + credits 1.00 - debits 0.00 = 6.00 EUR, but the closing balance is 5.00 (difference -1.00)');
    expect(parseStatement(xml, { acceptUnbalanced: true }).sections[0]!.balances).toMatchObject({ state: 'unbalanced', differenceCents: -1_00n });
  });
});
