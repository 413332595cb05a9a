import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsvProfile } from '../../src/statements/csv-profile.js';
import { csvSettings } from '../../src/statements/csv-settings.js';
import { parseStatement } from '../../src/statements/detect.js';

/**
 * CSV exports that were read wrong without a word: a head cut where a bare-CR file has no line
 * feed, day and month guessed, a fee lost, a second account's block stored as the first's, a
 * profile that drops every row, a profile file's byte order mark. Each is now read right, or
 * refused naming what is wrong.
 */
const outcome = (text: string, options: Parameters<typeof parseStatement>[1] = {}) => {
  try {
    return parseStatement(text, options).lines.map((l) => `${l.bookingDate} ${l.direction} ${l.amountCents} ${l.currency}`);
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
};

describe('CSV line endings', () => {
  // Excel for Mac's "CSV (Macintosh)" ends records with a bare CR. The layout is read from the
  // file's first 64 KiB, cut at its last record end: a file larger than that has no '\n' to cut at.
  it('reads a CR-only CSV larger than the head as it reads a small one', () => {
    const rows = Array.from({ length: 1500 }, (_, i) => `2026-03-${String((i % 28) + 1).padStart(2, '0')};-12,50;EUR;Rechnung ${i} Lieferant Muster GmbH Filiale 42`);
    const text = ['booking_date;amount;currency;remittance', ...rows].join('\r') + '\r';
    expect(text.length).toBeGreaterThan(64 * 1024);
    const got = outcome(text);
    expect(typeof got === 'string' ? got : got.length).toBe(1500);
  });
});

describe('CSV dates that fit DD/MM and MM/DD alike (PayPal)', () => {
  // PayPal writes MM/DD/YYYY or DD/MM/YYYY after the account's country; its profile allows both.
  const HEAD = '"Date","Time","TimeZone","Name","Type","Status","Currency","Gross","Fee","Net","From Email Address","To Email Address","Transaction ID","Balance","Subject","Note"';
  const row = (date: string, id: string) => `"${date}","10:00:00","PST","Shop","Express Checkout Payment","Completed","USD","100.00","-3.20","96.80","a@example.com","b@example.com","${id}","96.80","Order ${id}",""`;
  const file = (...dates: string[]) => [HEAD, ...dates.map((d, i) => row(d, `T${i}`))].join('\r\n') + '\r\n';

  it('refuses a file none of whose dates tells day from month, rather than guess either', () => {
    expect(outcome(file('03/05/2026', '03/11/2026'))).toBe(
      `refused: CSV row 2: booking date '03/05/2026' fits DD/MM/YYYY and MM/DD/YYYY alike, and so does every other date of the file: which is day and which month is a guess; write a profile with the file's one date format (docs/how-it-decides.md, "CSV profiles")`,
    );
  });

  it('reads a file whose dates decide the order, and one whose dates read alike in both', () => {
    expect(outcome(file('15/03/2026', '03/05/2026'))).toEqual(['2026-03-15 credit 9680 USD', '2026-05-03 credit 9680 USD']);
    expect(outcome(file('03/15/2026', '03/05/2026'))).toEqual(['2026-03-15 credit 9680 USD', '2026-03-05 credit 9680 USD']);
    expect(outcome(file('03/03/2026', '05/05/2026'))).toEqual(['2026-03-03 credit 9680 USD', '2026-05-05 credit 9680 USD']);
  });

  it('refuses a file whose deciding date comes after a date read otherwise, naming both', () => {
    expect(outcome(file('03/05/2026', '03/15/2026'))).toMatch(/^refused: CSV row 3: booking date '03\/15\/2026' is no DD\/MM\/YYYY date, .*CSV row 2: booking date '03\/05\/2026' fits DD\/MM\/YYYY and MM\/DD\/YYYY alike/);
  });
});

describe('CSV fee columns (Revolut)', () => {
  // Revolut takes a booking's fee from the balance besides its amount: the ATM withdrawal below
  // moved the balance from 1000.00 to 898.00. The fee is a debit line of its own.
  const HEAD = 'Type,Product,Started Date,Completed Date,Description,Amount,Fee,Currency,State,Balance';
  const text = (...rows: string[]) => [HEAD, ...rows].join('\n') + '\n';
  const TOPUP = 'TOPUP,Current,2026-03-01 09:00:00,2026-03-01 09:00:01,Payout PO2026030100000001,1000.00,0.00,EUR,COMPLETED,1000.00';

  it('stores the fee as a debit line, so the lines add up to what the balance moved', () => {
    const lines = parseStatement(text(TOPUP, 'ATM,Current,2026-03-02 10:00:00,2026-03-02 10:00:05,Cash at ATM,-100.00,2.00,EUR,COMPLETED,898.00')).lines;
    const net = lines.reduce((n, l) => n + (l.direction === 'credit' ? l.amountCents : -l.amountCents), 0n);
    expect(net).toBe(89800n);
    expect(lines.map((l) => [l.bookingDate, l.direction, l.amountCents, l.remittance, l.where])).toEqual([
      ['2026-03-01', 'credit', 100000n, 'Payout PO2026030100000001', 'CSV row 2'],
      ['2026-03-02', 'debit', 10000n, 'Cash at ATM', 'CSV row 3'],
      ['2026-03-02', 'debit', 200n, 'Fee: Cash at ATM', 'CSV row 3: Fee'],
    ]);
  });

  it("never gives a fee line its booking's reference, and reads a negative fee as one given back", () => {
    const lines = parseStatement(text('TRANSFER,Current,2026-03-01 09:00:00,2026-03-01 09:00:01,Payout PO2026030100000001,1000.00,-1.50,EUR,COMPLETED,1001.50')).lines;
    expect(lines.map((l) => [l.direction, l.amountCents, l.sepaReference])).toEqual([
      ['credit', 100000n, 'PO2026030100000001'],
      ['credit', 150n, null],
    ]);
  });

  it('keeps the bookings where they were without fees: a fee line comes after every booking row', () => {
    const lines = parseStatement(text('ATM,Current,2026-03-02 10:00:00,2026-03-02 10:00:05,Cash at ATM,-100.00,2.00,EUR,COMPLETED,898.00', TOPUP)).lines;
    expect(lines.filter((l) => l.where?.endsWith('Fee') !== true).map((l) => l.entryIndex)).toEqual([0, 1]);
    expect(lines.find((l) => l.where === 'CSV row 2: Fee')!.entryIndex).toBeGreaterThan(1);
  });

  it('refuses a fee whose own currency is not the booking’s', () => {
    expect(outcome(text('ATM,Current,2026-03-02 10:00:00,2026-03-02 10:00:05,Cash at ATM,-100.00,£2.00,EUR,COMPLETED,898.00'))).toBe(
      "refused: CSV row 2: the fee '£2.00' is in GBP, the booking in EUR",
    );
  });
});

describe('CSV exports of several accounts', () => {
  // comdirect's export of all accounts writes one block per account, each with its title row, its
  // balances and the same header row, and names no account: the blocks cannot be told apart.
  const block = (title: string, ...bookings: string[]) => [
    `"Umsätze ${title}";"Zeitraum: 30 Tage";`,
    '"Neuer Kontostand";"3.000,00 EUR";',
    '',
    '"Buchungstag";"Wertstellung (Valuta)";"Vorgang";"Buchungstext";"Umsatz in EUR";',
    ...bookings,
    '',
    '"Alter Kontostand";"1.500,00 EUR";',
    '',
  ];
  const PAYOUT = '"15.03.2026";"15.03.2026";"Übertrag / Überweisung";"Auftraggeber: BNPL Provider GmbH Buchungstext: Auszahlung PO2026031500000009";"2.000,00";';
  const TRANSFER = '"16.03.2026";"16.03.2026";"Übertrag / Überweisung";"Empfänger: Tagesgeld PLUS";"-500,00";';

  it("refuses a file with a second account's block, naming its header row", () => {
    const text = [';', ...block('Girokonto', PAYOUT, TRANSFER), ...block('Tagesgeld PLUS-Konto', '"16.03.2026";"16.03.2026";"Übertrag / Überweisung";"Auftraggeber: Girokonto";"500,00";')].join('\r\n');
    expect(outcome(text)).toBe("refused: CSV row 14: the header again, after rows that are no bookings from row 11 on: several accounts' blocks in one file (export one account per file)");
  });

  it('reads a header repeated right after bookings as the same table going on', () => {
    const [header] = block('Girokonto').slice(3);
    const text = [';', ...block('Girokonto', PAYOUT, header!, TRANSFER)].join('\r\n');
    expect(outcome(text)).toEqual(['2026-03-15 credit 200000 EUR', '2026-03-16 debit 50000 EUR']);
  });
});

describe('CSV profile files', () => {
  // A rowType column makes only rows of bookingRowTypes bookings; without them (the default is
  // none) every row of the file was dropped, and it imported with no lines.
  it('refuses a profile naming a rowType column without bookingRowTypes, naming the field', () => {
    const profile = { name: 'Hausbank', delimiter: ';', columns: { bookingDate: ['Datum'], amount: ['Betrag'], currency: ['Whg'], rowType: ['Satzart'] }, dateFormats: ['DD.MM.YYYY'], decimal: ',' };
    expect(() => parseCsvProfile(JSON.stringify(profile), 'CSV profile hausbank.json')).toThrow(
      'CSV profile hausbank.json: not a CSV profile: bookingRowTypes: needs the record types of booking rows, since columns.rowType is given (rows of any other type are not stored)',
    );
    const read = parseCsvProfile(JSON.stringify({ ...profile, bookingRowTypes: ['B'] }), 'CSV profile hausbank.json');
    expect(outcome('Satzart;Datum;Betrag;Whg\r\nB;02.03.2026;-12,50;EUR\r\nS;03.03.2026;100,00;EUR\r\n', { csv: { profiles: [read] } })).toEqual(['2026-03-02 debit 1250 EUR']);
  });

  // Notepad and Excel save UTF-8 with a byte order mark; Windows' "Unicode" is UTF-16LE with one.
  it('reads a profile file as statement files are decoded: UTF-8 with a BOM, UTF-16LE', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'csv-profile-bom-'));
    try {
      const json = JSON.stringify({ name: 'Hausbank Müller', delimiter: ';', columns: { bookingDate: ['Datum'], amount: ['Betrag'] }, dateFormats: ['DD.MM.YYYY'], decimal: ',' });
      const files = { 'utf8-bom.json': Buffer.from(`\uFEFF${json}`, 'utf8'), 'utf16.json': Buffer.from(`\uFEFF${json}`, 'utf16le') };
      for (const [name, bytes] of Object.entries(files)) {
        writeFileSync(path.join(dir, name), bytes);
        const options = await csvSettings({ STATEMENT_ACCOUNT_CURRENCIES: {} }, path.join(dir, name));
        expect(options.profiles?.[0]?.name, name).toBe('Hausbank Müller');
      }
      expect(parseCsvProfile(`\uFEFF${json}`, 'CSV profile').name).toBe('Hausbank Müller');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
