import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { entryKey, positionKey, statementKeyPrefix } from '../../src/statements/line-key.js';
import { BUILT_IN_PROFILES } from '../../src/statements/csv-profiles.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { BANK_FIXTURES } from './csv-banks.js';

/**
 * A CSV is one statement whose identity (account, period, bookings) is known only at its end, so
 * its lines are staged in parts and keyed in SQL once it is: the keys must be line-key.ts's, the
 * stored lines must add up to the file, and pending lines must never be stored.
 */
let db: TestDatabase;
useTestDatabase('statements_csv_import', (database) => (db = database));

const ACCOUNT = 'DE44500105175407324931';
const LINES = 4_500; // more than two parts of the reader's 2,000

function statement(delimiter: string, preamble: string[]): string {
  const rows = Array.from({ length: LINES }, (_, i) => {
    const day = String((i % 28) + 1).padStart(2, '0');
    const amount = `${i % 3 === 0 ? '-' : ''}${(i % 97) + 1}${delimiter === ';' ? ',' : '.'}${String(i % 100).padStart(2, '0')}`;
    return [`2026-06-${day}`, amount, 'EUR', `R${i}`, ACCOUNT, `Rechnung ${i}`].map((c) => (c.includes(delimiter) ? `"${c}"` : c)).join(delimiter);
  });
  return [...preamble, ['booking_date', 'amount', 'currency', 'entry_reference', 'account_iban', 'remittance'].join(delimiter), ...rows].join('\r\n') + '\r\n';
}

describe('CSV imports in parts', () => {
  it("keys the lines of a CSV staged in parts as line-key.ts does, and knows the same statement from other bytes by position", async () => {
    const text = statement(',', []);
    const parsed = parseStatement(text);
    expect(parsed.lines).toHaveLength(LINES);
    const first = await importStatement(db, 'sandbox', Buffer.from(text), 'parts.csv');
    expect(first).toMatchObject({ format: 'csv', linesRead: LINES, linesNew: LINES });
    const stored = await db.sql<{ position_key: string; entry_key: string; amount_cents: string; direction: string }[]>`
      select position_key, entry_key, amount_cents::text, direction::text from statement_lines where statement_id = ${first.statementId} order by entry_index`;
    const prefix = statementKeyPrefix(parsed.sections[0]!);
    expect(stored).toEqual(
      parsed.lines.map((l) => ({ position_key: positionKey(prefix, l), entry_key: entryKey(prefix, l), amount_cents: String(l.amountCents), direction: l.direction })),
    );
    // Another export of the same statement: other delimiter, decimal comma, a preamble.
    const again = await importStatement(db, 'sandbox', Buffer.from(statement(';', ['Kontoauszug;;', `Konto;${ACCOUNT}`, ''])), 'parts-again.csv');
    expect(again).toMatchObject({ alreadyImported: false, linesRead: LINES, linesNew: 0, linesKnown: LINES, linesOverlap: 0 });
  });

  it('stores no pending line and nothing but bookings: the stored lines add up to the file (DKB, Postbank, Revolut exports)', async () => {
    for (const name of ['DKB (since 2023)', 'Postbank', 'Revolut', 'Deutsche Bank', 'Volksbanken Raiffeisenbanken (until 2023, S/H column)']) {
      const f = BANK_FIXTURES.find((x) => x.profile === name)!;
      const r = await importStatement(db, 'sandbox', Buffer.from(f.text), `${name}.csv`, { csv: { accountCurrencies: f.accountCurrencies } });
      expect(r.linesNew, name).toBe(f.lines.length);
      const rows = await db.sql<{ direction: string; cents: string }[]>`
        select direction::text, sum(amount_cents)::text as cents from statement_lines where statement_id = ${r.statementId} group by direction order by direction`;
      const sum = (d: string) => f.lines.filter((l) => l[3] === d).reduce((n, l) => n + l[2], 0n);
      expect(rows, name).toEqual((['credit', 'debit'] as const).filter((d) => sum(d) > 0n).map((d) => ({ direction: d, cents: String(sum(d)) })));
    }
  });

  // Revolut takes a booking's fee from the balance besides its amount (the balance went 1000.00,
  // 898.00, 947.50). Its fee is a line of its own, an entry after every booking row's: a file
  // stored when fees were not read keeps its identity and its bookings' positions, and another
  // download of it adds its fees alone.
  it("stores a Revolut row's fee as a debit line of its own, and adds only the fees to a file stored without them", async () => {
    const text = [
      'Type,Product,Started Date,Completed Date,Description,Amount,Fee,Currency,State,Balance',
      'TOPUP,Current,2026-07-01 09:00:00,2026-07-01 09:00:01,Top-up,1000.00,0.00,EUR,COMPLETED,1000.00',
      'ATM,Current,2026-07-02 10:00:00,2026-07-02 10:00:05,Cash at ATM,-100.00,2.00,EUR,COMPLETED,898.00',
      'TRANSFER,Current,2026-07-03 10:00:00,2026-07-03 10:00:05,Payout PO2026070300000001,50.00,0.50,EUR,COMPLETED,947.50',
    ].join('\n') + '\n';
    const revolut = BUILT_IN_PROFILES.find((p) => p.name === 'Revolut')!;
    const { fee: _fee, ...columns } = revolut.columns;
    const before = await importStatement(db, 'sandbox', Buffer.from(text), 'revolut-without-fees.csv', { csv: { profiles: [{ ...revolut, columns }] } });
    expect(before).toMatchObject({ linesRead: 3, linesNew: 3 });
    // Another download of it (the same bytes are taken as imported, whatever they now read as).
    const r = await importStatement(db, 'sandbox', Buffer.from(text.replace(/\n/g, '\r\n')), 'revolut.csv');
    expect(r).toMatchObject({ alreadyImported: false, linesRead: 5, linesNew: 2, linesKnown: 3, linesOverlap: 0 });
    const [moved] = await db.sql<{ cents: string }[]>`
      select sum(case when direction = 'credit' then amount_cents else -amount_cents end)::text as cents from statement_lines where statement_id in ${db.sql([before.statementId, r.statementId])}`;
    expect(moved!.cents).toBe('94750');
  });

  it('stores nothing of a CSV refused at its last row, after parts of it were staged', async () => {
    const text = statement(',', []).replace(/\r\n$/, `\r\n2026-06-30,12.3.4,EUR,BAD,${ACCOUNT},x\r\n`).replace(/R(\d+),/g, 'Z$1,');
    await expect(importStatement(db, 'sandbox', Buffer.from(text), 'refused.csv')).rejects.toThrow(/^CSV row 4502: /);
    const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference like 'Z%' or bank_reference = 'BAD'`;
    expect(n?.n).toBe(0);
    expect((await db.sql`select 1 from bank_statements where file_name = 'refused.csv'`).length).toBe(0);
  });
});
