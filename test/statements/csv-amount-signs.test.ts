import { describe, expect, it } from 'vitest';
import { csvAmount } from '../../src/statements/csv-values.js';
import { parseStatement } from '../../src/statements/detect.js';

/**
 * `decimal: 'auto'` (the default of every user profile, and of the project's own profile) must not
 * read one '.' or ',' followed by three digits as a decimal separator: '5.500' (German 5,500.00)
 * would be 5.50 and '1,000' (English 1,000) 1.00, silently 1000x too small. Such an amount is refused
 * as ambiguous.
 */
describe('auto decimal: a thousands group read as three decimals', () => {
  it('refuses (or reads as thousands) "5.500" in a German file, never 5.50', () => {
    const text = 'Buchungstag;Betrag;Währung;Verwendungszweck\r\n02.03.2026;1.234,56;EUR;Rechnung 1\r\n03.03.2026;5.500;EUR;Miete\r\n';
    let cents: bigint[] | string;
    try {
      cents = parseStatement(text).lines.map((l) => l.amountCents);
    } catch (e) {
      cents = (e as Error).message;
    }
    // Either a refusal naming the row, or 5,500.00 EUR: never 5.50.
    expect(cents).not.toEqual([123456n, 550n]);
  });

  it('does not read "1,000" (one thousand, as an English export writes it) as 1.00', () => {
    const text = 'booking_date,amount,currency,remittance\r\n2026-03-02,"1,000",USD,Invoice 7\r\n';
    let cents: bigint[] | string;
    try {
      cents = parseStatement(text).lines.map((l) => l.amountCents);
    } catch (e) {
      cents = (e as Error).message;
    }
    expect(cents).not.toEqual([100n]);
  });
});

/**
 * A doubled or contradictory sign is garbage, not a credit: '--12.50', '(-12.00)' and '(12.00-)'
 * (two negative markers, which would cancel out) are refused.
 */
describe('contradictory signs', () => {
  it("refuses '--12.50' instead of booking a credit of 12.50", () => {
    const text = 'booking_date,amount,currency,remittance\r\n2026-03-02,--12.50,EUR,Card payment\r\n';
    expect(() => parseStatement(text)).toThrow(/CSV row 2/);
  });

  it("refuses '(-12.00)' and '(12.00-)' rather than reading them as +12.00", () => {
    expect(() => csvAmount('(-12.00)', '.', 'CSV row 2: amount')).toThrow();
    expect(() => csvAmount('(12.00-)', '.', 'CSV row 2: amount')).toThrow();
  });
});
