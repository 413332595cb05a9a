import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

/**
 * With an unsigned amount and a direction column (VR-Bank's S/H column), an EMPTY direction cell
 * leaves the direction unknown: falling back to the amount's sign would book an unsigned 850,00
 * debit as a credit. The row is refused.
 */
describe('a direction column left empty', () => {
  it('refuses the row (or at least does not book an unsigned amount as a credit)', () => {
    const head =
      'Buchungstag;Valuta;Auftraggeber/Zahlungsempfänger;Empfänger/Zahlungspflichtiger;Konto-Nr.;IBAN;BLZ;BIC;Vorgang/Verwendungszweck;Kundenreferenz;Währung;Umsatz;\r\n';
    const text =
      head +
      '02.03.2026;02.03.2026;Muster GmbH;Vermieter KG;;DE02120300000000202051;;BYLADEM1001;Dauerauftrag Miete;;EUR;850,00;\r\n' +
      '03.03.2026;03.03.2026;BNPL Provider;Muster GmbH;;DE02120300000000202051;;BYLADEM1001;Gutschrift;;EUR;10,00;H\r\n';
    expect(() => parseStatement(text)).toThrow(/CSV row 2: direction/);
  });
});

/**
 * The currency column's value is a currency: an ISO 4217 code or a sign of one ('€', 'Euro'), and
 * never silently wins over a contradicting code in the amount itself.
 */
describe('currency column values', () => {
  it("does not store '€' or 'EURO' as a line's currency (EUR, or a refusal)", () => {
    const text = 'booking_date,amount,currency,remittance\r\n2026-03-02,12.50,€,a\r\n2026-03-03,7.00,Euro,b\r\n';
    let currencies: string[] | string;
    try {
      currencies = parseStatement(text).lines.map((l) => l.currency);
    } catch (e) {
      currencies = 'refused';
    }
    expect(['refused', ['EUR', 'EUR']]).toContainEqual(currencies);
  });

  it("refuses '£12.50' in a row whose currency column says EUR (or takes GBP), never books it as EUR 12.50", () => {
    const text = 'booking_date,amount,currency,remittance\r\n2026-03-02,£12.50,EUR,Card payment London\r\n';
    let currency: string;
    try {
      currency = parseStatement(text).lines[0]!.currency;
    } catch {
      currency = 'refused';
    }
    expect(currency).not.toBe('EUR');
  });
});
