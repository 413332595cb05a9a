import { describe, expect, it } from 'vitest';
import { csvDate } from '../../src/statements/csv-values.js';
import { parseStatement } from '../../src/statements/detect.js';

/**
 * The PayPal profile lists ['DD/MM/YYYY', 'DD.MM.YYYY', 'MM/DD/YYYY'] to read both the European
 * and the US activity download. A cell that is no day in the first format it fits ('01/15/2026')
 * is read in the next; a file's dates are read in one format (csv-values.ts csvDateReader): a date
 * only one format reads decides it, and a later date that contradicts a guess refuses the file.
 */
const US_HEAD =
  '"Date","Time","TimeZone","Name","Type","Status","Currency","Gross","Fee","Net","From Email Address","To Email Address","Transaction ID","Item Title","Subject","Note","Balance"\r\n';
const row = (date: string, id: string) =>
  `"${date}","10:00:00","PST","Alice Buyer","Express Checkout Payment","Completed","USD","100.00","-3.20","96.80","alice@example.com","shop@example.com","${id}","","Order ${id}","","96.80"\r\n`;

describe('PayPal US activity download (MM/DD/YYYY)', () => {
  it('reads 01/15/2026 as 15 January (the profile names MM/DD/YYYY)', () => {
    expect(csvDate('01/15/2026', ['DD/MM/YYYY', 'DD.MM.YYYY', 'MM/DD/YYYY'], 'CSV row 2: booking date')).toBe('2026-01-15');
  });

  it('reads a US file whose first date only MM/DD/YYYY reads in that format throughout', () => {
    const dates = parseStatement(US_HEAD + row('01/15/2026', '2CD') + row('01/05/2026', '1AB')).lines.map((l) => l.bookingDate);
    expect(dates).toEqual(['2026-01-15', '2026-01-05']);
  });

  it('refuses a file whose later date contradicts the format its earlier dates were read in, rather than booking 01/05 on 1 May', () => {
    expect(() => parseStatement(US_HEAD + row('01/05/2026', '1AB') + row('01/15/2026', '2CD'))).toThrow(
      /CSV row 3: booking date '01\/15\/2026' is no DD\/MM\/YYYY date, the format the file's earlier dates were read in/,
    );
  });
});
