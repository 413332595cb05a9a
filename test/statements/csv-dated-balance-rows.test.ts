import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

const DE = 'DE44500105175407324931';
const PROV = 'DE02120300000000202051';
const rows = (...r: string[]) => `${r.join('\r\n')}\r\n`;

/**
 * VR-NetWorld (until 2023) writes its balance rows dated, with the word 'Anfangssaldo'/'Endsaldo'
 * in the column just before the currency — the 'Kundenreferenz' column, which the profile maps to
 * endToEndId. The skip word itself is no booking detail (csv.ts): those rows are balances, not
 * transactions.
 */
describe('CSV total-row rule: a skip word in a booking-detail column', () => {
  it('VR-Bank (until 2023): dated balance rows with the word in Kundenreferenz are not booked', () => {
    const text = rows(
      'Volksbank Musterstadt eG',
      'Umsatzanzeige;',
      `Kontonummer:;${DE}`,
      '',
      'Buchungstag;Valuta;Auftraggeber/Zahlungsempfänger;Empfänger/Zahlungspflichtiger;Konto-Nr.;IBAN;BLZ;BIC;Vorgang/Verwendungszweck;Kundenreferenz;Währung;Umsatz;',
      `02.03.2026;02.03.2026;Muster GmbH;BNPL Provider GmbH;;${PROV};;BNPADEFF;Gutschrift Auszahlung PO2026030200000003;PO2026030200000003;EUR;99,00;H`,
      '03.03.2026;03.03.2026;Muster GmbH;Buero AG;;DE89370400440532013000;;COBADEFF;Rechnung 77;;EUR;12,34;S',
      '01.03.2026;;;;;;;;;Anfangssaldo;EUR;500,00;H',
      '03.03.2026;;;;;;;;;Endsaldo;EUR;586,66;H',
    );
    const p = parseStatement(text);
    expect(p.lines.map((l) => [l.bookingDate, l.amountCents, l.direction])).toEqual([
      ['2026-03-02', 9900n, 'credit'],
      ['2026-03-03', 1234n, 'debit'],
    ]);
  });

});
