import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { accountId } from '../../src/statements/account.js';
import { encodingOf, streamDecoder, utf8Validator } from '../../src/statements/decode.js';
import { statementReader } from '../../src/statements/detect.js';
import type { StatementLine, StatementSection } from '../../src/statements/types.js';
import { detectFormat, parseStatement } from '../../src/statements/detect.js';
import { StatementFormatError, type ParsedStatement } from '../../src/statements/types.js';

// Fixtures written for this project after the banks' published MT940 and CAMT.053 layouts
// (test/statements/banks/); every line of every file is asserted field by field.
const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));
// sparkasse.csv has no currency column: its account's currency is the setting's (STATEMENT_ACCOUNT_CURRENCIES).
const CSV = { accountCurrencies: { DE44500105175407324931: 'EUR' } };

type Row = [booking: string, value: string | null, cents: bigint, direction: 'credit' | 'debit', currency: string, e2e: string | null,
  counterpartyIban: string | null, counterpartyName: string | null, remittance: string | null, bankReference: string | null, sepa: string | null];

function expectLines(p: ParsedStatement, rows: Row[]): void {
  const actual = p.lines.map((l): Row => [l.bookingDate, l.valueDate, l.amountCents, l.direction, l.currency, l.endToEndId, l.counterpartyIban,
    l.counterpartyName, l.remittance, l.bankReference, l.sepaReference]);
  expect(actual).toEqual(rows);
}

describe('MT940 as banks send it', () => {
  it('ABN AMRO: ABNANL2A/940 header lines, a bare account number made the IBAN with the BIC, :28:, unstructured GIRO and /TRTP/ layouts', () => {
    const p = parseStatement(file('abnamro.sta'));
    expect(p).toMatchObject({ format: 'mt940', accountIban: 'NL20ABNA0517852257', periodFrom: '2011-05-23T00:00:00.000Z', periodTo: '2011-05-26T00:00:00.000Z' });
    expect(p.sections).toHaveLength(2);
    expectLines(p, [
      ['2011-05-24', '2011-05-24', 900n, 'debit', 'EUR', null, null, null,
        'GIRO 428428 KPN - DIGITENNE BETALINGSKENM. 000000042188659 5314606715 BETREFT FACTUUR D.D. 20-05-2011 INCL. 1,44 BTW', null, null],
      ['2011-05-24', '2011-05-24', 100000n, 'credit', 'EUR', 'E2E-20110524-0001', 'NL44RABO0123456789', 'J. JANSEN', 'Terugbetaling lening', null, 'E2E-20110524-0001'],
      ['2011-05-25', '2011-05-25', 1550n, 'debit', 'EUR', 'ENECO-2011-05-778899', 'NL20INGB0001234567', 'ENECO', 'Energie mei 2011', null, 'ENECO-2011-05-778899'],
    ]);
  });

  it("ING: '0000 01INGBNL2A' headers, IBAN+currency account, /EREF/ /CNTP/ /REMI/USTD//, the customer reference 'EREF' never a SEPA reference", () => {
    const p = parseStatement(file('ing.sta'));
    expect(p.accountIban).toBe('NL69INGB0123456789');
    expect(parseStatement(file('ing.sta').toString('latin1').replace('NL69INGB0123456789EUR', '123456789')).accountIban).toBe('NL69INGB0123456789');
    expectLines(p, [
      ['2014-02-20', '2014-02-20', 156n, 'credit', 'EUR', 'EV12341REP1231456T1234', 'NL32INGB0000012345', 'ING BANK NV INZAKE WEB', 'EV10001REP1000000T1000', '00000000001005', 'EV12341REP1231456T1234'],
      ['2014-02-20', '2014-02-20', 157n, 'debit', 'EUR', 'EV123R1231231T2', 'NL32INGB0000012345', 'ING BANK NV', 'EV123R1231231T2', '00000000001006', 'EV123R1231231T2'],
      ['2014-02-20', '2014-02-20', 157n, 'credit', 'EUR', null, 'NL32INGB0000012345', 'J. Janssen', 'Factuurnr 123 Klantnr 00123', '00000000001007', null],
    ]);
  });

  it("Rabobank: ':940:' first, zero-padded amounts, 'IBAN EUR' account, a second message without '-' before it", () => {
    const p = parseStatement(file('rabobank.sta'));
    expect(p.accountIban).toBe('NL44RABO0123456789');
    expect(p.sections.map((s) => s.accountIban)).toEqual(['NL44RABO0123456789', 'NL44RABO0123456789']);
    expectLines(p, [
      ['2014-01-02', '2014-01-02', 10000n, 'credit', 'EUR', '02-01-2014 00:31 0030003618706301', 'NL12ABNA0123456789', 'J. Jansen', 'Factuur 2013-118', null, '02-01-2014 00:31 0030003618706301'],
      ['2014-01-02', '2014-01-02', 5025n, 'debit', 'EUR', null, 'NL08INGB0000000555', 'Garage De Vries', 'APK 02-01-2014', null, null],
      ['2014-01-03', '2014-01-03', 1200n, 'debit', 'EUR', 'POS-2014-01-03-001', 'NL08INGB0000000555', 'Garage De Vries', 'Pinbetaling 03-01-2014', null, 'POS-2014-01-03-001'],
    ]);
  });

  it('German bank in a SWIFT envelope: {1:}{2:}{3:}{4: -}{5:}, DOS EOF between messages, BLZ/account, ?-subfields, Windows-1252, :61: variants', () => {
    const p = parseStatement(file('deutsche.sta'));
    expect(p.accountIban).toBe('DE44500105175407324931');
    expect(p.sections).toHaveLength(2);
    expectLines(p, [
      // CR: credit with funds code R; the customer reference is an instruction id of its own.
      ['2026-03-02', '2026-03-02', 25000n, 'credit', 'EUR', 'PO2026030200000042', 'DE02120300000000202051', 'BNPL Provider GmbH', 'Auszahlung Rechnung 4711', 'BK260302001', 'PO2026030200000042'],
      // EREF+ continues into ?21 (its ?20 is full) up to MREF+; ?30/?31 bank code and account become the IBAN; ?32 full, ?33 continues the name.
      ['2026-03-02', '2026-03-02', 1999n, 'debit', 'EUR', 'STROM-2026-03-1234567890', 'DE89370400440532013000', 'Stadtwerke Müller GmbH & Co. KG', 'Abschlag März 2026 Kundennr 1234', 'BK260302002', 'STROM-2026-03-1234567890'],
      // Value date 30 February (interest), kept as the month's last day.
      ['2026-03-03', '2026-02-28', 123n, 'credit', 'EUR', null, null, null, 'Zinsen Abrechnung 28.02.2026', null, null],
      // RC: the reversal of a credit is a debit.
      ['2026-03-03', '2026-03-03', 25000n, 'debit', 'EUR', 'PO2026030200000042', 'DE02120300000000202051', 'BNPL Provider GmbH', 'Ruecküberweisung', 'BK260303001', 'PO2026030200000042'],
      // '5' without decimal comma and the type 'NIT '.
      ['2026-03-03', '2026-03-03', 500n, 'debit', 'EUR', null, null, null, 'Kontoführung März', null, null],
      // '1.50' with a decimal point and no type code; then the same booking again, an equal second one.
      ['2026-03-03', '2026-03-03', 150n, 'debit', 'EUR', null, null, null, 'Porto Kontoauszug', null, null],
      ['2026-03-03', '2026-03-03', 150n, 'debit', 'EUR', null, null, null, 'Porto Kontoauszug', null, null],
    ]);
  });

  it("German :86: keywords: RD (reversal of a debit: a credit), MREF+/CRED+/KREF+ skipped, ?60-?61 purpose with ABWA+, the name from ABWA+ without ?32", () => {
    const p = parseStatement(file('postbank.sta'));
    expect(p).toMatchObject({ accountIban: 'DE77100100100123456789', periodFrom: '2026-04-16T00:00:00.000Z', periodTo: '2026-04-18T00:00:00.000Z' });
    expectLines(p, [
      // ?23 is full (27 characters), so 'Beitr' + 'ag' is one word; EREF+ ends where ?21 starts (?20 was not full).
      ['2026-04-16', '2026-04-16', 7500n, 'credit', 'EUR', 'LS-2026-04-0815', 'DE89370400440532013000', 'Sportverein Blau-Weiss e.V.', 'Ruecklastschrift Beitrag April', 'RUECK-0416', 'LS-2026-04-0815'],
      // The :61: customer reference 'KREF+...' is no SEPA reference; SVWZ+ runs over ?22-?24 and ends at ABWA+ in ?60.
      ['2026-04-16', '2026-04-16', 123456n, 'debit', 'EUR', 'INV-2026-0815-XYZ-0001', 'DE44500105175407324931', 'Buero Bedarf Nord GmbH', 'Rechnung 2026-0815 vom 01.04.2026 Kundennummer 10-77', 'B-0416-2', 'INV-2026-0815-XYZ-0001'],
      ['2026-04-17', '2026-04-17', 30000n, 'credit', 'EUR', 'PO2026041700000003', 'DE02120300000000202051', 'BNPL Provider GmbH', 'Auszahlung April', 'B-0417-1', 'PO2026041700000003'],
    ]);
    expect(p.lines.map((l) => l.instructionId)).toEqual([null, null, null]);
  });

  it("Volksbank export: SOH and a leading '-', entry dates across New Year, a :60M:/:62M: continued statement", () => {
    const p = parseStatement(file('volksbank.sta'));
    expect(p.accountIban).toBe('DE38760260000012345678');
    expect(p.sections).toHaveLength(1);
    expect(p.lines.map((l) => [l.section, l.entryIndex])).toEqual([[0, 0], [0, 1], [0, 2]]);
    expectLines(p, [
      ['2025-12-31', '2025-12-31', 10000n, 'debit', 'EUR', 'MIETE-2025-12', null, null, 'Miete Januar', null, 'MIETE-2025-12'],
      // value date 2 January 2026, entry date 31 December: the previous year
      ['2025-12-31', '2026-01-02', 2000n, 'credit', 'EUR', null, null, null, 'Erstattung', null, null],
      ['2026-01-02', '2026-01-02', 2000n, 'debit', 'EUR', null, null, null, 'Geschenk', null, null],
    ]);
  });

  it('reads the same file with LF line ends and with a leading SOH', () => {
    for (const name of ['abnamro.sta', 'ing.sta', 'rabobank.sta']) {
      const crlf = parseStatement(file(name));
      const text = file(name).toString('latin1');
      for (const variant of [text.replace(/\r\n/g, '\n'), `\x01${text}\x03`, `-\r\n${text}\x1a`]) expect(parseStatement(Buffer.from(variant, 'latin1')).lines).toEqual(crlf.lines);
    }
  });

  it('refuses a statement whose balances do not add up, naming the difference', () => {
    const text = file('rabobank.sta').toString('latin1').replace(':62F:C140102EUR000000001284,31', ':62F:C140102EUR000000001284,30');
    expect(() => parseStatement(Buffer.from(text, 'latin1'))).toThrow(/MT940 message 1 .*does not balance.*closing balance is 1284\.30 \(difference -0\.01\)/);
  });

  it('refuses unknown :61: lines and impossible dates with the message and field', () => {
    const base = file('rabobank.sta').toString('latin1');
    expect(() => parseStatement(base.replace(':61:140102C000000000100,00N541NONREF', ':61:14010XC100,00'))).toThrow(/message 1: :61: not understood/);
    expect(() => parseStatement(base.replace(':61:140102C', ':61:141302C'))).toThrow(/not a date: '141302'/);
  });
});

describe('CAMT.053 as banks send it', () => {
  it('German camt.053.001.02 in ISO-8859-1, times without zone, an entry without BookgDt dated by its value date', () => {
    const p = parseStatement(file('camt053-de.xml'));
    expect(p).toMatchObject({ format: 'camt053', accountIban: 'DE44500105175407324931', periodFrom: '2026-03-02T00:00:00.000Z', periodTo: '2026-03-03T00:00:00.000Z' });
    expectLines(p, [
      ['2026-03-02', '2026-03-02', 25000n, 'credit', 'EUR', 'PO2026030200000042', 'DE02120300000000202051', 'BNPL Provider GmbH', 'Auszahlung Rechnung 4711', 'BK260302001', 'PO2026030200000042'],
      ['2026-03-02', '2026-03-02', 1999n, 'debit', 'EUR', 'STROM-2026-03-1234567890', 'DE89370400440532013000', 'Stadtwerke Müller GmbH & Co. KG', 'Abschlag März 2026 Kundennr 1234', 'BK260302002', 'STROM-2026-03-1234567890'],
    ]);
  });

  it('is the same lines as the MT940 of that day: same account, dates, amounts and directions', () => {
    const camt = parseStatement(file('camt053-de.xml'));
    const mt = parseStatement(file('deutsche.sta'));
    const entry = (l: StatementLine) => [l.accountIban, l.bookingDate, l.currency, l.direction, l.amountCents];
    expect(camt.lines.map(entry)).toEqual(mt.lines.filter((l) => l.bookingDate === '2026-03-02').map(entry));
  });

  it('Swiss camt.053.001.08: partial batch kept whole, full batch split, equal card payments and shared references stay, pending skipped', () => {
    const p = parseStatement(file('camt053-ch.xml'));
    expect(p.accountIban).toBe('CH9300762011623852957');
    expect(p.sections.map((s) => [s.periodFrom, s.periodTo, s.firstWholeDay, s.lastWholeDay])).toEqual([
      ['2026-03-01T23:00:00.000Z', '2026-03-02T23:00:00.000Z', '2026-03-02', '2026-03-02'],
      ['2026-03-02T23:00:00.000Z', '2026-03-03T11:00:00.000Z', '2026-03-03', '2026-03-02'],
    ]);
    expectLines(p, [
      ['2026-03-02', '2026-03-02', 400000n, 'credit', 'CHF', null, null, null, 'details of 2 transaction(s), not the whole entry: INV-1 150000, INV-2 100000', 'BATCH-77', null],
      ['2026-03-02', '2026-03-02', 10000n, 'debit', 'CHF', 'SAL-1', null, 'Mitarbeiter 1', 'Lohn März', 'PAY-88/1', 'SAL-1'],
      ['2026-03-02', '2026-03-02', 10000n, 'debit', 'CHF', 'SAL-2', null, 'Mitarbeiter 2', 'Lohn März', 'PAY-88/2', 'SAL-2'],
      ['2026-03-02', '2026-03-02', 10000n, 'debit', 'CHF', 'SAL-3', null, 'Mitarbeiter 3', 'Lohn März', 'PAY-88/3', 'SAL-3'],
      ['2026-03-02', null, 450n, 'debit', 'CHF', null, null, null, 'Kartenzahlung Kaffee', null, null],
      ['2026-03-02', null, 450n, 'debit', 'CHF', null, null, null, 'Kartenzahlung Kaffee', null, null],
      ['2026-03-02', '2026-03-02', 2000n, 'debit', 'CHF', null, null, null, 'Dauerauftrag Miete Garage', 'SO-2026-03', null],
      ['2026-03-02', '2026-03-02', 2000n, 'debit', 'CHF', null, null, null, 'Dauerauftrag Verein', 'SO-2026-03', null],
      // no BookgDt and no ValDt: the statement's date
      ['2026-03-02', null, 200n, 'debit', 'CHF', null, null, null, 'Spesen', 'FEE-1', null],
      ['2026-03-03', null, 450n, 'debit', 'CHF', null, null, null, 'Kartenzahlung Kaffee', null, null],
    ]);
    expect(p.lines.map((l) => [l.entryIndex, l.txIndex])).toEqual([[0, 0], [1, 0], [1, 1], [1, 2], [2, 0], [3, 0], [4, 0], [5, 0], [7, 0], [0, 0]]);
    // The split batch's lines keep the batch's own reference as their entry's.
    expect(p.lines.slice(1, 4).map((l) => l.entryReference)).toEqual(['PAY-88', 'PAY-88', 'PAY-88']);
  });

  it('refuses camt.052, camt.054, a document without <Stmt> and an unbalanced statement, saying why', () => {
    const doc = (body: string) => `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.05x">${body}</Document>`;
    expect(() => parseStatement(doc('<BkToCstmrAcctRpt><GrpHdr/><Rpt/></BkToCstmrAcctRpt>'))).toThrow(/camt\.052 .* not a statement/);
    expect(() => parseStatement(doc('<BkToCstmrDbtCdtNtfctn><Ntfctn/></BkToCstmrDbtCdtNtfctn>'))).toThrow(/camt\.054 .* not a statement/);
    expect(() => parseStatement(doc('<BkToCstmrStmt><GrpHdr><MsgId>1</MsgId></GrpHdr></BkToCstmrStmt>'))).toThrow(/without a <Stmt>/);
    const unbalanced = file('camt053-ch.xml').toString('utf8').replace('13649.00</Amt>', '13650.00</Amt>');
    expect(() => parseStatement(unbalanced)).toThrow(/statement CH-2026-03-02 does not balance: .* = 13649\.00 CHF, but the closing balance is 13650\.00 \(difference 1\.00\)/);
  });
});

describe('CSV and encodings', () => {
  it('reads a Windows-1252 CSV with a preamble and German column names', () => {
    expect(() => parseStatement(file('sparkasse.csv'))).toThrow(
      /^CSV row 3: no currency: the file \(.*\) has no currency column, names none in its amounts, header or preamble, and STATEMENT_ACCOUNT_CURRENCIES sets none for account DE44500105175407324931$/,
    );
    const p = parseStatement(file('sparkasse.csv'), { csv: CSV });
    expect(detectFormat(file('sparkasse.csv').toString('latin1'))).toBe('csv');
    expectLines(p, [
      ['2026-03-02', '2026-03-02', 1999n, 'debit', 'EUR', null, null, 'Stadtwerke Müller GmbH & Co. KG', 'Abschlag März 2026', null, null],
      ['2026-03-02', '2026-03-02', 25000n, 'credit', 'EUR', null, null, 'BNPL Provider GmbH', 'Auszahlung PO2026030200000042', null, 'PO2026030200000042'],
    ]);
  });

  it('reads UTF-8 and UTF-16 with BOM alike', () => {
    const text = file('camt053-de.xml').toString('latin1').replace('encoding="ISO-8859-1"', 'encoding="UTF-8"');
    const utf8 = parseStatement(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]));
    const utf16 = parseStatement(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    expect(utf8.lines).toEqual(parseStatement(file('camt053-de.xml')).lines);
    expect(utf16.lines).toEqual(utf8.lines);
  });

  it('refuses an XML declaration naming an unknown encoding', () => {
    expect(() => parseStatement(Buffer.from('<?xml version="1.0" encoding="x-unknown"?><Document/>'))).toThrow(StatementFormatError);
  });
});

describe('account identity', () => {
  it('normalises IBAN, IBAN+currency, BLZ/account and keeps other forms as written', () => {
    expect(accountId('NL69INGB0123456789EUR')).toBe('NL69INGB0123456789');
    // With its currency this one also passes mod 97 (one string in 97 does): the country's IBAN length decides.
    expect(accountId('DE16760260000000000011EUR')).toBe('DE16760260000000000011');
    expect(accountId('NL44RABO0123456789 EUR')).toBe('NL44RABO0123456789');
    expect(accountId('de44 5001 0517 5407 3249 31')).toBe('DE44500105175407324931');
    expect(accountId('50010517/5407324931')).toBe('DE44500105175407324931');
    expect(accountId('76026000/12345678EUR')).toBe('DE38760260000012345678');
    expect(accountId('517852257')).toBe('517852257');
    expect(accountId('517852257', 'ABNANL2A')).toBe('NL20ABNA0517852257');
    expect(accountId('517852257', 'DEUTDEFF')).toBe('517852257');
    // A Dutch account after its bank's BIC, or bare with the currency, with the BIC in the header.
    expect(accountId('ABNANL2A/517852257')).toBe('NL20ABNA0517852257');
    expect(accountId('RABONL2U/0123456789')).toBe('NL44RABO0123456789');
    expect(accountId('517852257EUR', 'ABNANL2AXXX')).toBe('NL20ABNA0517852257');
    // A German bank's bare account number: the IBAN needs the bank code, which the BIC does not give.
    expect(accountId('5407324931', 'DEUTDEFFXXX')).toBe('5407324931');
    // an IBAN with a wrong check digit is not mistaken for one with a currency code
    expect(accountId('NL70INGB0123456789EUR')).toBe('NL70INGB0123456789EUR');
    expect(accountId('  ')).toBeNull();
  });
});

describe('streaming', () => {
  it('reads every fixture alike whole and in 5-byte pieces (characters, lines and XML split across pieces)', () => {
    for (const name of readdirSync(path.join(import.meta.dirname, 'banks'))) {
      const bytes = file(name);
      const validator = utf8Validator();
      for (let i = 0; i < bytes.length; i += 5) validator.write(bytes.subarray(i, i + 5));
      const decoder = streamDecoder(encodingOf(bytes, validator.valid()));
      const sections: StatementSection[] = [];
      const lines: StatementLine[] = [];
      let text = '';
      for (let i = 0; i < bytes.length; i += 5) text += decoder.write(bytes.subarray(i, i + 5));
      text += decoder.end();
      const reader = statementReader(text, (s, l, more) => {
        if (!more) sections.push(s);
        lines.push(...l);
      }, { csv: CSV, whole: true });
      for (let i = 0; i < text.length; i += 5) reader.write(text.slice(i, i + 5));
      reader.end();
      const whole = parseStatement(bytes, { csv: CSV });
      expect(lines, name).toEqual(whole.lines);
      expect(sections, name).toEqual(whole.sections);
    }
  });
});
