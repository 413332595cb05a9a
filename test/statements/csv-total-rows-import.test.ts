import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/** As csv-total-rows.test.ts, in the ledger: the stored lines add up to the file. */
let db: TestDatabase;
useTestDatabase('csv_total_rows', (database) => (db = database));

describe('stored lines add up to the file', () => {
  it('stores the Monzo card payment at TOTAL: two bookings in, two lines stored, 50.00 GBP of debits', async () => {
    const text =
      'Transaction ID,Date,Time,Type,Name,Emoji,Category,Amount,Currency,Local amount,Local currency,Notes and #tags,Address,Receipt,Description,Category split,Money Out,Money In\r\n' +
      'tx_0001,04/03/2026,10:00:00,Card payment,TOTAL,,Transport,-45.00,GBP,-45.00,GBP,,,,TOTAL,,-45.00,\r\n' +
      'tx_0002,05/03/2026,11:00:00,Card payment,Tesco,,Groceries,-5.00,GBP,-5.00,GBP,,,,TESCO STORES,,-5.00,\r\n';
    const r = await importStatement(db, 'sandbox', Buffer.from(text), 'monzo.csv');
    const [sum] = await db.sql<{ n: string; debits: string | null }[]>`
      select count(*)::text as n, sum(amount_cents) filter (where direction = 'debit')::text as debits from statement_lines where statement_id = ${r.statementId}`;
    expect({ linesRead: r.linesRead, stored: sum!.n, debits: sum!.debits }).toEqual({ linesRead: 2, stored: '2', debits: '5000' });
  });
});
