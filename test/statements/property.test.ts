import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { booked, camt, mt940, statementArb, type GenStatement, type Wrapper } from './generate.js';

let db: TestDatabase;
useTestDatabase('statements_property', (database) => (db = database));

// Every run uses its own environment-wide unique account (and clears it first: fast-check may
// replay an account while shrinking), so runs do not see each other's lines.
async function clear(account: string): Promise<void> {
  await db.sql`delete from statement_lines where account_iban = ${account}`;
  await db.sql`delete from statement_periods where statement_id in (select id from bank_statements where account_iban = ${account})`;
  await db.sql`delete from bank_statements where account_iban = ${account}`;
}

async function storedTotals(account: string) {
  const [r] = await db.sql<{ credit: string; debit: string }[]>`
    select coalesce(sum(amount_cents) filter (where direction = 'credit'), 0)::text as credit,
           coalesce(sum(amount_cents) filter (where direction = 'debit'), 0)::text as debit
    from statement_lines where account_iban = ${account}`;
  return { credit: BigInt(r!.credit), debit: BigInt(r!.debit) };
}

const lineCount = (s: GenStatement) => s.days.flatMap((d) => d.entries).reduce((n, e) => n + (e.txs && e.txs.reduce((a, b) => a + b, 0n) === e.cents && e.txs.length > 1 ? e.txs.length : 1), 0);

describe('generated statements', () => {
  it('CAMT.053: stored totals equal booked totals; the same days again, daily or as one statement, add nothing', async () => {
    await fc.assert(
      fc.asyncProperty(statementArb, fc.boolean(), async (s, dailyFirst) => {
        await clear(s.account);
        const whole = camt(s, [s.days], 'w');
        const daily = camt(s, s.days.map((d) => [d]), 'd');
        const [first, second] = dailyFirst ? [daily, whole] : [whole, daily];
        const a = await importStatement(db, 'sandbox', Buffer.from(first), 'a.xml');
        expect(a.linesNew).toBe(lineCount(s));
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
        const b = await importStatement(db, 'sandbox', Buffer.from(second), 'b.xml');
        expect(b.linesNew).toBe(0);
        const c = await importStatement(db, 'sandbox', Buffer.from(first.replace(/\n/g, '\n  ')), 'c.xml');
        expect(c).toMatchObject({ alreadyImported: false, linesNew: 0 });
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it('MT940 with any bank wrapper: stored totals equal booked totals; another wrapper or line end adds nothing', async () => {
    const wrappers: Wrapper[] = ['plain', 'swift', 'abn', 'ing', 'eof', 'rabo'];
    await fc.assert(
      fc.asyncProperty(statementArb, fc.constantFrom(...wrappers), fc.constantFrom(...wrappers), fc.constantFrom('\r\n', '\n'), async (s, w1, w2, eol) => {
        await clear(s.account);
        const a = await importStatement(db, 'sandbox', Buffer.from(mt940(s, w1)), 'a.sta');
        expect(a.linesNew).toBe(s.days.reduce((n, d) => n + d.entries.length, 0));
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
        const b = await importStatement(db, 'sandbox', Buffer.from(mt940(s, w2, eol)), 'b.sta');
        expect(b.linesNew).toBe(0);
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
