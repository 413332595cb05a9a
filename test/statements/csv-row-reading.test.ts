import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

/**
 * The CSV reader (src/statements/csv.ts) row by row: a row that is a booking is read with the amount
 * and direction the file writes, or the file is refused naming the row; never a booking dropped or
 * misread (a split amount, a TOTAL counterparty, a pending line's continuation at the top, a sign
 * contradicting the direction column). Fixtures written by hand from the layouts in
 * docs/how-it-decides.md and csv-profiles.ts.
 */
const DE = 'DE44500105175407324931';

/** The outcome of parsing: the lines (date, cents, direction) or the refusal's message. */
function outcome(text: string): { lines: [string, string, string][] } | { refused: string } {
  try {
    const p = parseStatement(text);
    return { lines: p.lines.map((l) => [l.bookingDate, String(l.amountCents), l.direction]) };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

describe('a row with more cells than its header', () => {
  it('is refused (or read whole), never read as 12.00 when an unquoted decimal comma split 12,50 over two cells', () => {
    // The project's own column names, comma-delimited; the amount written with a decimal comma and
    // not quoted, so csv-parse splits it: '12' under "amount" and '50' in a cell the header lacks.
    const text = 'booking_date,currency,amount\n2026-03-01,EUR,12,50\n2026-03-02,EUR,1.00\n';
    const r = outcome(text);
    if ('refused' in r) expect(r.refused).toMatch(/CSV row 2/);
    else expect(r.lines[0]).toEqual(['2026-03-01', '1250', 'credit']);
  });

  it('is refused (or read whole) in an N26 export: -12,50 in the last column is not a debit of 12.00', () => {
    const text =
      '"Booking Date","Value Date","Partner Name","Partner Iban",Type,"Payment Reference","Account Name","Amount (EUR)","Original Amount","Original Currency","Exchange Rate"\n' +
      '2026-03-01,2026-03-01,Shop,,Debit Transfer,RE 1,Main,-12,50,,,\n';
    const r = outcome(text);
    if ('refused' in r) expect(r.refused).toMatch(/CSV row 2/);
    else expect(r.lines).toEqual([['2026-03-01', '1250', 'debit']]);
  });
});

describe('Volksbanken Raiffeisenbanken (until 2023): dated balance rows', () => {
  const vr = (rows: string[]) =>
    ['Volksbank Musterstadt eG', 'Umsatzanzeige;', `Kontonummer:;${DE}`, '',
      'Buchungstag;Valuta;Auftraggeber/Zahlungsempfänger;Empfänger/Zahlungspflichtiger;Konto-Nr.;IBAN;BLZ;BIC;Vorgang/Verwendungszweck;Kundenreferenz;Währung;Umsatz;',
      ...rows].join('\r\n') + '\r\n';

  it('stores a card payment whose counterparty is TOTAL: a dated row with a counterparty is a booking', () => {
    // docs/how-it-decides.md: "a dated row with a skip word and no counterparty, reference or status is a balance row"
    // and "a dated row is a booking whatever its text (a card payment at a `TOTAL` station)". This row has a counterparty.
    const text = vr([
      '01.03.2026;;;;;;;;Anfangssaldo;;EUR;500,00;H',
      '05.03.2026;05.03.2026;Muster GmbH;TOTAL;;;;;Kartenzahlung girocard 05.03 10:12;;EUR;45,00;S',
      '05.03.2026;;;;;;;;Endsaldo;;EUR;455,00;H',
    ]);
    expect(outcome(text)).toEqual({ lines: [['2026-03-05', '4500', 'debit']] });
  });
});

describe('continuation rows', () => {
  const sparkasse =
    '"Auftragskonto";"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";"Beguenstigter/Zahlungspflichtiger";"Kontonummer/IBAN";"BIC (SWIFT-Code)";"Betrag";"Waehrung";"Info"\n';

  it("drops a pending line's continuation with it when the pending line is the file's first row", () => {
    // docs/how-it-decides.md: "A row with neither date nor amount continues the previous line's text,
    // unless that line was not stored (a pending line's continuation goes with it)". Newest-first
    // exports put the pending lines at the top.
    const text = sparkasse +
      `"${DE}";"";"";"KARTENZAHLUNG";"Tankstelle";"X";"";"";"-50,00";"EUR";"Umsatz vorgemerkt"\n` +
      ';;;;"Fortsetzung des Verwendungszwecks";;;;;;\n' +
      `"${DE}";"02.03.26";"02.03.26";"GUTSCHRIFT";"RE 1";"Y";"";"";"100,00";"EUR";"Umsatz gebucht"\n`;
    expect(outcome(text)).toEqual({ lines: [['2026-03-02', '10000', 'credit']] });
  });
});

describe('a direction column', () => {
  it('refuses a row whose amount is signed negative while its direction says credit, rather than guessing one of the two', () => {
    // docs: "An amount carries one negative sign at most (`--12.50`, `(-12.00)` are refused)": two
    // statements of the direction that disagree are a guess either way. Here the sign says debit, the column credit.
    const r = outcome('booking_date;amount;currency;credit_debit\n2026-03-01;-12,50;EUR;C\n');
    expect(r).toHaveProperty('refused');
    expect((r as { refused: string }).refused).toMatch(/CSV row 2/);
  });
});
