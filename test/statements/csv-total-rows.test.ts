import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

/**
 * Total and balance rows are recognised by a skip word (COMMON_SKIP: 'Total', 'Saldo', 'Summe',
 * 'Solde', ...) as a whole cell or at the start of the first; but a card payment at a TOTAL fuel
 * station (merchant name 'TOTAL') is a booking, and must not be dropped, or the stored lines no
 * longer add up to the file.
 */
describe('bookings dropped as if they were total rows', () => {
  it('Monzo: a card payment to merchant "TOTAL" is a booking', () => {
    const head =
      'Transaction ID,Date,Time,Type,Name,Emoji,Category,Amount,Currency,Local amount,Local currency,Notes and #tags,Address,Receipt,Description,Category split,Money Out,Money In\r\n';
    const text =
      head +
      'tx_0001,04/03/2026,10:00:00,Card payment,TOTAL,,Transport,-45.00,GBP,-45.00,GBP,,,,TOTAL,,-45.00,\r\n' +
      'tx_0002,05/03/2026,11:00:00,Card payment,Tesco,,Groceries,-5.00,GBP,-5.00,GBP,,,,TESCO STORES,,-5.00,\r\n';
    const p = parseStatement(text);
    expect(p.lines.map((l) => [l.bankReference, l.amountCents, l.direction])).toEqual([
      ['tx_0001', 4500n, 'debit'],
      ['tx_0002', 500n, 'debit'],
    ]);
  });

  it('Revolut: a completed card payment described "Total" is a booking', () => {
    const head = 'Type,Product,Started Date,Completed Date,Description,Amount,Fee,Currency,State,Balance\r\n';
    const text =
      head +
      'CARD_PAYMENT,Current,2026-03-02 08:10:11,2026-03-02 09:00:00,Total,-45.00,0.00,EUR,COMPLETED,955.00\r\n' +
      'CARD_PAYMENT,Current,2026-03-02 10:10:11,2026-03-02 11:00:00,Bakery,-8.75,0.00,EUR,COMPLETED,946.25\r\n';
    const debits = parseStatement(text).sections[0]!.booked.get('EUR')?.debit;
    expect(debits).toBe(5375n);
  });

  it('a file whose first column is the counterparty: "TotalEnergies" is a booking, not a total row', () => {
    const text =
      'counterparty_name,booking_date,amount,currency,remittance\r\n' +
      'TotalEnergies Station 42,2026-03-02,-45.00,EUR,Fuel\r\n' +
      'Bakery,2026-03-02,-8.75,EUR,Card\r\n';
    expect(parseStatement(text).lines.map((l) => l.counterpartyName)).toEqual(['TotalEnergies Station 42', 'Bakery']);
  });
});

/**
 * A row with neither date nor amount continues "the previous line's text"; when the previous row
 * was a pending line (an amount and no booking date: never stored), its continuation goes with it,
 * and must not be glued onto the last booked line (which would take the pending payout's reference).
 */
describe("a pending line's continuation row", () => {
  it("does not give a booked card payment the pending payout's reference", () => {
    const text =
      'booking_date,amount,currency,counterparty_name,remittance\r\n' +
      '2026-03-02,-8.75,EUR,Bakery,Card payment\r\n' +
      ',1250.00,EUR,BNPL Provider,Payout\r\n' +
      ',,,,PO2026030400000027\r\n';
    const [line] = parseStatement(text).lines;
    expect(line!.sepaReference).toBeNull();
    expect(line!.remittance).toBe('Card payment');
  });
});
