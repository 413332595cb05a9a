import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, DAY_MS, type Simulator } from '../../sim/index.js';
import { decimalToCents } from '../../src/statements/money.js';
import { detectFormat, parseStatement } from '../../src/statements/detect.js';
import { StatementFormatError, type ParsedStatement } from '../../src/statements/types.js';
import { csvAmountToCents } from '../../src/statements/money.js';
import { PAYOUT_FAULTS } from './sim-helpers.js';

let sim: Simulator;
let dir: string;
const parsed: Record<string, ParsedStatement> = {};
const raw: Record<string, string> = {};

beforeAll(async () => {
  sim = await startSimulator({ seed: 'statements-parse', faults: PAYOUT_FAULTS, business: { ordersPerDay: 120 } });
  await sim.advance(7 * DAY_MS);
  dir = await mkdtemp(path.join(tmpdir(), 'bnpl-stmt-'));
  for (const file of await sim.writeStatements(dir)) {
    if (!path.basename(file).startsWith('sandbox-')) continue;
    const ext = file.endsWith('.xml') ? 'camt' : file.endsWith('.csv') ? 'csv' : 'mt940';
    raw[ext] = await readFile(file, 'utf8');
    parsed[ext] = parseStatement(Buffer.from(raw[ext]));
  }
});
afterAll(async () => {
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

const signed = (s: ParsedStatement) => s.lines.reduce((sum, l) => sum + (l.direction === 'credit' ? l.amountCents : -l.amountCents), 0n);

describe('parsers on the simulator statements', () => {
  it('detects each format from its content', () => {
    expect(parsed.camt?.format).toBe('camt053');
    expect(parsed.csv?.format).toBe('csv');
    expect(parsed.mt940?.format).toBe('mt940');
    expect(parsed.camt!.lines.length).toBeGreaterThan(20);
  });

  it('reads the same lines from CAMT.053, CSV and MT940, line by line', () => {
    const camt = parsed.camt!.lines;
    const csv = parsed.csv!.lines;
    const mt = parsed.mt940!.lines;
    expect(csv).toHaveLength(camt.length);
    expect(mt).toHaveLength(camt.length);
    camt.forEach((c, i) => {
      for (const other of [csv[i]!, mt[i]!]) {
        expect(other.amountCents).toBe(c.amountCents);
        expect(other.direction).toBe(c.direction);
        expect(other.bookingDate).toBe(c.bookingDate);
        expect(other.valueDate).toBe(c.valueDate);
        expect(other.sepaReference).toBe(c.sepaReference);
        expect(other.bankReference).toBe(c.bankReference);
        expect(other.counterpartyIban).toBe(c.counterpartyIban);
        expect(other.accountIban).toBe(c.accountIban);
      }
      expect(csv[i]!.remittance).toBe(c.remittance);
    });
    const payoutCredits = camt.filter((l) => l.counterpartyIban === sim.bank.sandbox.providerIban);
    expect(payoutCredits.length).toBeGreaterThan(2);
    // The payout's reference is the line's own, or (the bank variant that writes it only in the text)
    // a word of its remittance after an invoice number, which then comes first.
    for (const l of payoutCredits) {
      if (/^PO\d{16}$/.test(l.sepaReference ?? '')) continue;
      expect(l.remittance).toMatch(/^Rechnung RE\d{10} Auszahlung PO\d{16}$/);
      expect(l.sepaReference).toMatch(/^RE\d{10}$/);
    }
    expect(payoutCredits.some((l) => /^PO\d{16}$/.test(l.sepaReference ?? ''))).toBe(true);
    expect(payoutCredits.some((l) => /^RE\d{10}$/.test(l.sepaReference ?? ''))).toBe(true);
  });

  it('sums exactly to closing minus opening balance in every format', () => {
    const camtBal = [...raw.camt!.matchAll(/<Cd>(OPBD|CLBD)<\/Cd><\/CdOrPrtry><\/Tp>\s*<Amt Ccy="EUR">([\d.]+)<\/Amt>\s*<CdtDbtInd>(\w+)</g)];
    const bal = (code: string) => {
      const m = camtBal.find((x) => x[1] === code)!;
      return (m[3] === 'DBIT' ? -1n : 1n) * decimalToCents(m[2]!);
    };
    const movement = bal('CLBD') - bal('OPBD');
    expect(signed(parsed.camt!)).toBe(movement);
    expect(signed(parsed.csv!)).toBe(movement);
    expect(signed(parsed.mt940!)).toBe(movement);
    const mtOpen = /:60F:([CD])\d{6}EUR([\d,]+)/.exec(raw.mt940!)!;
    const mtClose = /:62F:([CD])\d{6}EUR([\d,]+)/.exec(raw.mt940!)!;
    const mtBal = (m: RegExpExecArray) => (m[1] === 'D' ? -1n : 1n) * decimalToCents(m[2]!);
    expect(mtBal(mtClose) - mtBal(mtOpen)).toBe(movement);
  });

  it('takes the statement period from FrToDt, the balance dates and the booking days', () => {
    expect(parsed.camt!.periodFrom).toBe(new Date(Date.parse('2026-01-05T00:00:00Z')).toISOString());
    for (const p of Object.values(parsed)) expect(Date.parse(p.periodTo!)).toBeGreaterThanOrEqual(Date.parse(`${p.lines.at(-1)!.bookingDate}T00:00:00Z`));
    expect(parsed.mt940!.periodTo!.endsWith('T00:00:00.000Z')).toBe(true);
  });
});

describe('amounts without floats', () => {
  it('converts decimal text to cents exactly', () => {
    expect(decimalToCents('0.29')).toBe(29n);
    expect(decimalToCents('1234,5')).toBe(123450n);
    expect(decimalToCents('-0.01')).toBe(-1n);
    expect(decimalToCents('12')).toBe(1200n);
    expect(decimalToCents('12.50000')).toBe(1250n);
    expect(decimalToCents('99999999999999999.99')).toBe(9999999999999999999n);
    expect(() => decimalToCents('12.505')).toThrow(StatementFormatError);
    expect(() => decimalToCents('1e3')).toThrow(StatementFormatError);
    expect(csvAmountToCents('1.234,56')).toBe(123456n);
    expect(csvAmountToCents('-1,234.56')).toBe(-123456n);
  });
});

describe('hand-written statements', () => {
  it('parses a German-bank CSV with a preamble, semicolons, quotes and DD.MM.YYYY', () => {
    const text = [
      'Kontoauszug;;',
      'Buchungstag;Valuta;Betrag;Waehrung;Verwendungszweck;IBAN;Name',
      '02.03.2026;02.03.2026;"1.250,00";EUR;"Auszahlung PO2026030212345678; danke";DE02 1203 0000 0000 2020 51;"Provider ""BNPL"" GmbH"',
      '03.03.2026;03.03.2026;-19,99;EUR;Lastschrift 123;DE89370400440532013000;Strom',
      '',
    ].join('\r\n');
    expect(detectFormat(text)).toBe('csv');
    const p = parseStatement(Buffer.from(text));
    expect(p.lines).toHaveLength(2);
    expect(p.lines[0]).toMatchObject({
      bookingDate: '2026-03-02', amountCents: 125000n, direction: 'credit', counterpartyIban: 'DE02120300000000202051',
      counterpartyName: 'Provider "BNPL" GmbH', sepaReference: 'PO2026030212345678', endToEndId: null,
    });
    expect(p.lines[1]).toMatchObject({ amountCents: 1999n, direction: 'debit', sepaReference: null });
    expect(p.periodTo).toBe('2026-03-04T00:00:00.000Z');
  });

  it('parses MT940 with a SWIFT envelope, reversals, an entry date across New Year and EREF split over subfields', () => {
    const text = [
      '{1:F01BANKDEFFXXXX0000000000}{2:O940}{4:',
      ':20:STMT1',
      ':25:DE44 5001 0517 5407 3249 31',
      ':28C:1/1',
      ':60F:C251231EUR100,00',
      ':61:2601011231C50,00NTRFNONREF//B1',
      ':86:166?00SEPA-GUTSCHRIFT?20EREF+PO2025123112345678ABCD?21EFGH?22SVWZ+Auszahlung?31DE02120300000000202051?32Provider',
      ':61:260102RC10,5NTRFREF123//B2',
      ':86:Storno',
      ':62F:C260102EUR139,50',
      '-}',
    ].join('\n');
    expect(detectFormat(text)).toBe('mt940');
    const p = parseStatement(text);
    expect(p.accountIban).toBe('DE44500105175407324931');
    expect(p.lines[0]).toMatchObject({ bookingDate: '2025-12-31', valueDate: '2026-01-01', amountCents: 5000n, direction: 'credit',
      sepaReference: 'PO2025123112345678ABCDEFGH', remittance: 'Auszahlung', bankReference: 'B1' });
    expect(p.lines[1]).toMatchObject({ direction: 'debit', amountCents: 1050n, sepaReference: 'REF123', remittance: 'Storno' });
    expect(p.periodFrom).toBe('2025-12-31T00:00:00.000Z');
    expect(p.periodTo).toBe('2026-01-03T00:00:00.000Z');
  });

  it('reads German :86: purpose subfields in the order of their codes, whatever order the bank wrote them in (?20-?29, then ?60-?63)', () => {
    const text = [
      ':20:STMT2',
      ':25:DE44500105175407324931',
      ':28C:2/1',
      ':60F:C260105EUR0,00',
      ':61:2601050105C12,00NTRFNONREF//B3',
      ':86:166?00GUTSCHRIFT?60fuer Januar?21Rechnung 4711?20Miete?32Hausverwaltung',
      ':62F:C260105EUR12,00',
      '-',
    ].join('\n');
    expect(parseStatement(text).lines[0]).toMatchObject({ remittance: 'Miete Rechnung 4711 fuer Januar', counterpartyName: 'Hausverwaltung' });
  });

  it('parses camt.053.001.08 shapes: Sts/Cd, DtTm, Pty names, NOTPROVIDED, a batch split into transactions, pending entries skipped', () => {
    const xml = `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><Stmt>
      <Acct><Id><IBAN>DE44500105175407324931</IBAN></Id></Acct>
      <Ntry><Amt Ccy="EUR">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><DtTm>2026-02-01T10:00:00+01:00</DtTm></BookgDt>
        <AcctSvcrRef>E1</AcctSvcrRef><NtryDtls>
        <TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><Amt Ccy="EUR">10.00</Amt><RltdPties><Dbtr><Pty><Nm>A</Nm></Pty></Dbtr></RltdPties><RmtInf><Ustrd>Auszahlung PO2026020100000001</Ustrd></RmtInf></TxDtls>
        <TxDtls><Refs><InstrId>X-2</InstrId></Refs><Amt Ccy="EUR">20.00</Amt></TxDtls>
      </NtryDtls></Ntry>
      <Ntry><Amt Ccy="EUR">5.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>PDNG</Cd></Sts><BookgDt><Dt>2026-02-01</Dt></BookgDt></Ntry>
    </Stmt></BkToCstmrStmt></Document>`;
    const p = parseStatement(xml);
    expect(p.lines).toHaveLength(2);
    expect(p.lines[0]).toMatchObject({ amountCents: 1000n, bankReference: 'E1/1', counterpartyName: 'A', endToEndId: null, sepaReference: 'PO2026020100000001', bookingDate: '2026-02-01' });
    expect(p.lines[1]).toMatchObject({ amountCents: 2000n, bankReference: 'E1/2', sepaReference: 'X-2' });
  });

  it('refuses what is not a statement, whatever the name', () => {
    for (const text of ['hello world', '<html><body>no</body></html>', '{"a":1}', '<Document><BkToCstmrNtfctn/></Document>']) {
      expect(detectFormat(text)).toBeNull();
      expect(() => parseStatement(text)).toThrow(StatementFormatError);
    }
    // A table no bank profile fits goes to the CSV reader, which names its columns and the nearest profile's missing ones.
    expect(detectFormat('a,b,c\n1,2,3\n')).toBe('csv');
    expect(() => parseStatement('a,b,c\n1,2,3\n')).toThrow(/^CSV row 1: no bank profile fits this header \(the columns found: 'a', 'b', 'c'\); write a profile/);
    expect(() => parseStatement('Datum;Omschrijving;Saldo na trn;x\n2026-03-02;a;1,00;b\n')).toThrow(/the columns found: 'Datum', 'Omschrijving', 'Saldo na trn', 'x'; the nearest profile, ING Nederland, misses 'Bedrag \(EUR\)', 'Mutatiesoort'\)/);
    expect(() => parseStatement('<Document><BkToCstmrStmt><Stmt>')).toThrow(StatementFormatError);
  });
});
