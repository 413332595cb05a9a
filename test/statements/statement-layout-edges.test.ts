import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

const outcome = (text: string) => {
  try {
    return parseStatement(text).lines.map((l) => `${l.bookingDate} ${l.direction} ${l.amountCents} ${l.currency}`);
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
};

describe('MT940 entry-date year over a statement spanning more than a year', () => {
  // A rarely-moved account: the bank's statement opens with the balance of its previous statement
  // (20 Dec 2024) and closes on 5 Jan 2026. A credit value-dated 31 Dec 2025 booked 2 Jan 2026.
  // Both 2025-01-02 and 2026-01-02 lie inside the balance span: the one nearer the value date wins.
  it('books MMDD 0102 with value date 2025-12-31 on 2026-01-02', () => {
    const text = `:20:STARTUMS
:25:50010517/5407324931
:28C:7/1
:60F:C241220EUR1000,00
:61:2512310102CR100,00NTRFNONREF//B1
:86:166?00GUTSCHRIFT?20SVWZ+Zinsen 2025
:62F:C260105EUR1100,00
-`;
    expect(outcome(text)).toEqual(['2026-01-02 credit 10000 EUR']);
  });
});

describe('CSV header repeated after a page break of the same account', () => {
  // A paged export: each page ends with "Balance carried forward", the next repeats the header and
  // opens with "Balance brought forward". One account, one table.
  it('reads both pages instead of refusing the file as several accounts', () => {
    const text = [
      'booking_date;amount;currency;remittance',
      '2026-03-01;-12,50;EUR;Rechnung 1',
      'Balance carried forward;987,50;EUR;',
      'booking_date;amount;currency;remittance',
      'Balance brought forward;987,50;EUR;',
      '2026-03-02;-10,00;EUR;Rechnung 2',
    ].join('\r\n') + '\r\n';
    expect(outcome(text)).toEqual(['2026-03-01 debit 1250 EUR', '2026-03-02 debit 1000 EUR']);
  });

  it('reads a header repeated after a booking whose text continues on the next row', () => {
    const text = [
      'booking_date;amount;currency;remittance',
      '2026-03-01;-12,50;EUR;Rechnung 1',
      ';;;Lieferant Muster GmbH',
      'booking_date;amount;currency;remittance',
      '2026-03-02;-10,00;EUR;Rechnung 2',
    ].join('\r\n') + '\r\n';
    expect(outcome(text)).toEqual(['2026-03-01 debit 1250 EUR', '2026-03-02 debit 1000 EUR']);
  });
});
