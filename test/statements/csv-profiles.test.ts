import { describe, expect, it } from 'vitest';
import { csvLayout } from '../../src/statements/csv.js';
import { csvProfileSchema, parseCsvProfile } from '../../src/statements/csv-profile.js';
import { BUILT_IN_PROFILES } from '../../src/statements/csv-profiles.js';
import { csvAmount, csvDate } from '../../src/statements/csv-values.js';
import { parseStatement } from '../../src/statements/detect.js';
import { StatementFormatError } from '../../src/statements/types.js';
import { BANK_FIXTURES } from './csv-banks.js';

const tuple = (l: ReturnType<typeof parseStatement>['lines'][number]) => [
  l.bookingDate, l.valueDate, l.amountCents, l.direction, l.currency, l.counterpartyName, l.counterpartyIban, l.endToEndId, l.bankReference, l.remittance, l.accountIban,
];

describe('bank CSV profiles', () => {
  it('has at least twenty-five banks across six countries, each with a fixture', () => {
    const banks = BUILT_IN_PROFILES.filter((p) => p.country !== undefined && !p.name.includes('layout'));
    expect(banks.length).toBeGreaterThanOrEqual(25);
    expect(new Set(banks.map((p) => p.country)).size).toBeGreaterThanOrEqual(6);
    const tested = new Set(BANK_FIXTURES.map((f) => f.profile));
    expect(BUILT_IN_PROFILES.filter((p) => p.country !== undefined && !tested.has(p.name)).map((p) => p.name)).toEqual(['HSBC UK (no header)']);
  });

  it.each(BANK_FIXTURES.map((f) => [f.profile, f] as const))('reads %s: every line, pending lines and totals left out', (name, f) => {
    expect(csvLayout(f.text, true, { accountCurrencies: f.accountCurrencies }).profile.name).toBe(name);
    const p = parseStatement(Buffer.from(f.text, 'utf8'), { csv: { accountCurrencies: f.accountCurrencies } });
    expect(p.format).toBe('csv');
    expect(p.lines.map(tuple)).toEqual(f.lines);
    // The statement's booked totals are its lines' (what the import checks the stored lines against).
    const booked = p.sections[0]!.booked;
    for (const direction of ['credit', 'debit'] as const) {
      const sum = f.lines.filter((l) => l[3] === direction).reduce((n, l) => n + l[2], 0n);
      expect([...booked.values()].reduce((n, t) => n + t[direction], 0n)).toBe(sum);
    }
  });

  it('refuses a file without currency and account, naming what is missing (HSBC UK writes neither)', () => {
    const text = '04/03/2026,BNPL PROVIDER LTD PO2026030400000027,"1,250.00"\r\n05/03/2026,TESCO STORES,-8.75\r\n';
    expect(csvLayout(text, true).profile.name).toBe('HSBC UK (no header)');
    expect(() => parseStatement(text)).toThrow(
      new StatementFormatError(
        'CSV row 1: no currency: the file (HSBC UK (no header)) has no currency column, names none in its amounts, header or preamble, and names no account whose currency STATEMENT_ACCOUNT_CURRENCIES could set',
      ),
    );
  });

  it('refuses a split-column row with both a debit and a credit, and one with neither', () => {
    const head = 'Transaction Date,Transaction Type,Sort Code,Account Number,Transaction Description,Debit Amount,Credit Amount,Balance\r\n';
    const both = `${head}06/03/2026,BGC,'30-00-00,12345678,X,1.00,2.00,0\r\n`;
    const neither = `${head}06/03/2026,BGC,'30-00-00,12345678,X,,,0\r\n`;
    const opts = { accountCurrencies: { '12345678': 'GBP' } };
    expect(() => parseStatement(both, { csv: opts })).toThrow(/^CSV row 2: both a debit \('1\.00'\) and a credit \('2\.00'\) amount$/);
    expect(() => parseStatement(neither, { csv: opts })).toThrow(/^CSV row 2: missing amount$/);
  });

  it('continues the previous line with a row of text only, and refuses a dated row without amount', () => {
    const text = 'booking_date,amount,currency,remittance\r\n2026-03-02,1.00,EUR,Rechnung\r\n,,,"Nr. 4711"\r\n2026-03-03,,EUR,x\r\n';
    expect(() => parseStatement(text)).toThrow(/^CSV row 4: missing amount$/);
    const p = parseStatement(text.replace('2026-03-03,,EUR,x\r\n', ''));
    expect(p.lines.map((l) => l.remittance)).toEqual(['Rechnung Nr. 4711']);
  });

  it('reads dates in every format a profile may name, two-digit years as MT940 does', () => {
    expect(csvDate('05.12.25', ['DD.MM.YY'], 'd')).toBe('2025-12-05');
    expect(csvDate('05.12.85', ['DD.MM.YY'], 'd')).toBe('1985-12-05');
    expect(csvDate('05/12/2025', ['DD/MM/YYYY'], 'd')).toBe('2025-12-05');
    expect(csvDate('12/05/2025', ['MM/DD/YYYY'], 'd')).toBe('2025-12-05');
    expect(csvDate('05-12-2025', ['DD-MM-YYYY'], 'd')).toBe('2025-12-05');
    expect(csvDate('20251205', ['YYYYMMDD'], 'd')).toBe('2025-12-05');
    expect(csvDate('5 Dec 2025', ['D MMM YYYY'], 'd')).toBe('2025-12-05');
    expect(csvDate('05. Dez. 2025', ['D MMM YYYY'], 'd')).toBe('2025-12-05');
    expect(csvDate('5 mrt 2025', ['D MMM YYYY'], 'd')).toBe('2025-03-05');
    expect(csvDate('05-févr-2025', ['D MMM YYYY'], 'd')).toBe('2025-02-05');
    expect(csvDate('Dec 5, 2025', ['MMM D, YYYY'], 'd')).toBe('2025-12-05');
    expect(csvDate('2025-12-05 10:00:00', ['YYYY-MM-DD'], 'd')).toBe('2025-12-05');
    expect(() => csvDate('2025-12-05', ['DD.MM.YYYY'], 'CSV row 2: booking date')).toThrow(
      /^CSV row 2: booking date not understood: '2025-12-05' \(expected DD\.MM\.YYYY\)$/,
    );
    expect(() => csvDate('5 Foo 2025', ['D MMM YYYY'], 'd')).toThrow(StatementFormatError);
  });

  it('reads amounts with currency signs, grouping and signs before or after', () => {
    expect(csvAmount('£1,234.56', '.', 'a')).toEqual({ cents: 123456n, currency: 'GBP' });
    expect(csvAmount('-1.234,56 €', ',', 'a')).toEqual({ cents: -123456n, currency: 'EUR' });
    expect(csvAmount("11'373.94", '.', 'a')).toEqual({ cents: 1137394n, currency: null });
    expect(csvAmount('1 200,00', ',', 'a')).toEqual({ cents: 120000n, currency: null });
    expect(csvAmount('12,50-', ',', 'a')).toEqual({ cents: -1250n, currency: null });
    expect(csvAmount('(3.40)', '.', 'a')).toEqual({ cents: -340n, currency: null });
    expect(csvAmount('CHF 5.00', '.', 'a')).toEqual({ cents: 500n, currency: 'CHF' });
    expect(csvAmount('$5.00', '.', 'a')).toEqual({ cents: 500n, currency: null });
    expect(() => csvAmount('1.234,56', '.', 'CSV row 2: amount')).toThrow(/^CSV row 2: amount not understood: '1\.234,56' \(decimal separator '\.'\)$/);
    expect(() => csvAmount('12,3,4', ',', 'a')).toThrow(StatementFormatError);
    expect(() => csvAmount('5 apples', '.', 'a')).toThrow(StatementFormatError);
  });
});

describe('a user-written profile', () => {
  const profile = {
    name: 'Hausbank Musterstadt',
    columns: { bookingDate: ['Tag'], amount: ['Summe'], direction: ['Richtung'], remittance: ['Text'], currency: ['Whg'] },
    dateFormats: ['DD.MM.YYYY'],
    decimal: ',',
    credit: ['Eingang'],
    debit: ['Ausgang'],
  };
  const text = 'Tag;Summe;Richtung;Text;Whg\r\n02.03.2026;10,00;Eingang;Auszahlung PO2026030200009999;EUR\r\n03.03.2026;2,50;Ausgang;Gebühr;EUR\r\n';

  it('reads a bank no built-in profile knows', () => {
    expect(() => parseStatement(text)).toThrow(/^CSV row 1: no bank profile fits this header \(the columns found: 'Tag', 'Summe', 'Richtung', 'Text', 'Whg'; the nearest profile, Raiffeisen Schweiz, misses 'Booked At', 'Credit\/Debit Amount'\); write a profile for it \(statement import --profile FILE, see docs\/how-it-decides.md, "CSV profiles"\)$/);
    const p = parseStatement(text, { csv: { profiles: [parseCsvProfile(JSON.stringify(profile), 'hausbank.json')] } });
    expect(p.lines.map(tuple)).toEqual([
      ['2026-03-02', null, 1000n, 'credit', 'EUR', null, null, null, null, 'Auszahlung PO2026030200009999', null],
      ['2026-03-03', null, 250n, 'debit', 'EUR', null, null, null, null, 'Gebühr', null],
    ]);
    expect(p.lines[0]!.sepaReference).toBe('PO2026030200009999');
  });

  it('is refused, saying what is wrong, when it is not a profile', () => {
    expect(() => parseCsvProfile('{', 'p.json')).toThrow(/^p\.json: not JSON/);
    expect(() => parseCsvProfile(JSON.stringify({ ...profile, columns: { bookingDate: ['Tag'] } }), 'p.json')).toThrow(
      /^p\.json: not a CSV profile: columns: needs an amount column, or a debit and a credit column$/,
    );
    expect(() => parseCsvProfile(JSON.stringify({ ...profile, header: false }), 'p.json')).toThrow(/cells: a profile without a header row needs its cell count/);
    expect(csvProfileSchema.safeParse({ ...profile, dateFormats: ['someday'] }).success).toBe(false);
  });
});
