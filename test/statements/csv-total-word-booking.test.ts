import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

/**
 * Lloyds' export has no counterparty, reference or status column (date, type, sort code, account,
 * description, debit, credit, balance) and no dated balance rows: a card payment whose description
 * is 'TOTAL' is a booking, which nothing would notice lost (a CSV's balances are not checked).
 */
describe('CSV total-row rule on a profile without booking-detail columns', () => {
  it('Lloyds: a card payment described TOTAL, with its own running balance, is a booking', () => {
    const text =
      'Transaction Date,Transaction Type,Sort Code,Account Number,Transaction Description,Debit Amount,Credit Amount,Balance\r\n' +
      "06/03/2026,DEB,'30-00-00,12345678,TOTAL,45.00,,955.00\r\n" +
      "07/03/2026,DD,'30-00-00,12345678,COUNCIL TAX,120.00,,835.00\r\n";
    const p = parseStatement(text, { csv: { accountCurrencies: { '12345678': 'GBP' } } });
    expect(p.lines.map((l) => [l.bookingDate, l.amountCents, l.direction, l.remittance])).toEqual([
      ['2026-03-06', 4500n, 'debit', 'TOTAL'],
      ['2026-03-07', 12000n, 'debit', 'COUNCIL TAX'],
    ]);
  });
});
