import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { booked, camt, csv, csvBank, dutchReference, mt940, statementArb, type CamtLayout, type GenStatement, type Mt940Layout, type Wrapper } from './generate.js';

let db: TestDatabase;
useTestDatabase('statements_property', (database) => (db = database));

// Every run uses its own environment-wide unique account (and clears it first: fast-check may
// replay an account while shrinking), so runs do not see each other's lines.
/**
 * Every statement of the file's database, not only the account's: a CSV without rows names no
 * account, and left behind it made the next case's identical empty file "already imported".
 */
async function clear(_account: string): Promise<void> {
  await db.sql`truncate statement_lines, statement_entries, statement_periods, bank_statements, discrepancies cascade`;
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

  it('format mixes: the same days as CAMT.053 (daily or whole), MT940 or CSV (with or without references, or as three banks export it), in any order, are stored once', async () => {
    type Format = 'camt-whole' | 'camt-daily' | 'mt940' | 'csv-ref' | 'csv-noref' | 'csv-deutsche' | 'csv-dkb' | 'csv-ingnl';
    const formats: Format[] = ['camt-whole', 'camt-daily', 'mt940', 'csv-ref', 'csv-noref', 'csv-deutsche', 'csv-dkb', 'csv-ingnl'];
    // Three renderings of each format that differ only in their bytes (whitespace, wrapper, line ends).
    const render = (s: GenStatement, f: Format, variant: 0 | 1 | 2): string => {
      const indent = ['\n', '\n  ', '\n    '][variant]!;
      const eol = ['\r\n', '\n', '\r\n'][variant]!;
      const tail = variant === 2 ? '\r\n' : '';
      switch (f) {
        case 'camt-whole':
          return camt(s, [s.days], 'w').replace(/\n/g, indent);
        case 'camt-daily':
          return camt(s, s.days.map((d) => [d]), 'd').replace(/\n/g, indent);
        case 'mt940':
          return mt940(s, (['plain', 'swift', 'abn'] as const)[variant]);
        case 'csv-ref':
          return csv(s, true, eol) + tail;
        case 'csv-noref':
          return csv(s, false, eol) + tail;
        case 'csv-deutsche':
          return csvBank(s, 'deutsche', eol) + tail;
        case 'csv-dkb':
          return csvBank(s, 'dkb', eol) + tail;
        case 'csv-ingnl':
          return csvBank(s, 'ingnl', eol) + tail;
      }
    };
    const entries = (s: GenStatement) => s.days.reduce((n, d) => n + d.entries.length, 0);
    const lines = (s: GenStatement, f: Format) => (f.startsWith('camt') ? lineCount(s) : entries(s));
    await fc.assert(
      fc.asyncProperty(statementArb, fc.constantFrom(...formats), fc.constantFrom(...formats), async (s, f1, f2) => {
        await clear(s.account);
        const a = await importStatement(db, 'sandbox', Buffer.from(render(s, f1, 0)), 'a');
        expect(a).toMatchObject({ linesRead: lines(s, f1), linesNew: lines(s, f1), linesKnown: 0, linesOverlap: 0 });
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
        const b = await importStatement(db, 'sandbox', Buffer.from(render(s, f2, f1 === f2 ? 1 : 0)), 'b');
        expect(b.linesNew).toBe(0);
        expect(b.linesKnown + b.linesOverlap).toBe(lines(s, f2));
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
        const again = await importStatement(db, 'sandbox', Buffer.from(render(s, f2, 2)), 'c');
        expect(again).toMatchObject({ alreadyImported: false, linesNew: 0 });
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
      }),
      { numRuns: 60 },
    );
  }, 300_000);

  const storedCount = async () => (await db.sql<{ n: number }[]>`select ((select count(*) from bank_statements) + (select count(*) from statement_lines))::int as n`)[0]!.n;

  it('MT940 layouts (a continued :28C:, only a :65F:, no balances, Dutch :86: with / inside values): stored totals equal booked, unchecked statements counted, the standard layout again adds nothing', async () => {
    const layouts: Mt940Layout[] = ['continued-28c', 'opening-only', 'no-balances', 'dutch'];
    await fc.assert(
      fc.asyncProperty(statementArb, fc.constantFrom(...layouts), fc.constantFrom<Wrapper>('plain', 'swift', 'ing', 'eof'), async (s, layout, wrapper) => {
        await clear(s.account);
        const entries = s.days.reduce((n, d) => n + d.entries.length, 0);
        if (layout === 'no-balances' && entries === 0) return;
        const a = await importStatement(db, 'sandbox', Buffer.from(mt940(s, wrapper, '\r\n', layout)), 'a.sta');
        expect(a.linesNew).toBe(entries);
        const messages = layout === 'no-balances' ? s.days.filter((d) => d.entries.length > 0).length : s.days.length;
        expect(a).toMatchObject({ statements: messages, balancesUnchecked: layout === 'opening-only' || layout === 'no-balances' ? messages : 0, statementsUnbalanced: 0 });
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
        if (layout === 'dutch') {
          const e2e = await db.sql<{ end_to_end_id: string }[]>`select end_to_end_id from statement_lines where end_to_end_id is not null order by id`;
          expect(e2e.map((r) => r.end_to_end_id)).toEqual(s.days.flatMap((d, k) => d.entries.flatMap((e, i) => (e.e2e ? [dutchReference(e.e2e, k, i)] : []))));
        }
        const b = await importStatement(db, 'sandbox', Buffer.from(mt940(s, 'plain')), 'b.sta');
        expect(b.linesNew).toBe(0);
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it('CAMT.053 layouts (entries without BookgDt/ValDt, only CLBD): dated by their statement, stored totals equal booked, the standard statement again adds nothing; without Acct refused and nothing stored', async () => {
    const layouts: CamtLayout[] = ['no-dates', 'closing-only', 'no-account'];
    await fc.assert(
      fc.asyncProperty(statementArb, fc.constantFrom(...layouts), async (s, layout) => {
        await clear(s.account);
        const daily = camt(s, s.days.map((d) => [d]), 'd', layout);
        if (layout === 'no-account') {
          await expect(importStatement(db, 'sandbox', Buffer.from(daily), 'a.xml')).rejects.toThrow(/: no Acct: the statement names no account/);
          expect(await storedCount()).toBe(0);
          return;
        }
        const a = await importStatement(db, 'sandbox', Buffer.from(daily), 'a.xml');
        expect(a).toMatchObject({ linesNew: lineCount(s), balancesUnchecked: layout === 'closing-only' ? s.days.length : 0 });
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
        const dates = await db.sql<{ booking_date: string; n: number }[]>`select booking_date, count(distinct entry_key)::int as n from statement_lines group by 1 order by 1`;
        expect(dates).toEqual(s.days.filter((d) => d.entries.length > 0).map((d) => ({ booking_date: d.date, n: d.entries.length })));
        const b = await importStatement(db, 'sandbox', Buffer.from(camt(s, [s.days], 'w')), 'b.xml');
        expect(b.linesNew).toBe(0);
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it('a statement whose closing balance is off: refused with nothing stored; accepted, stored with one statement_unbalanced finding naming the difference', async () => {
    await fc.assert(
      fc.asyncProperty(statementArb, fc.bigInt({ min: -5000n, max: 5000n }).filter((d) => d !== 0n), async (s, delta) => {
        await clear(s.account);
        // The last :62F: claims delta more than the bookings give.
        const text = mt940(s, 'plain').replace(/:62F:([CD])(\d{6})EUR(\d+),(\d{2})(?![\s\S]*:62F:)/, (_m, mark: string, date: string, units: string, cents: string) => {
          const v = (mark === 'D' ? -1n : 1n) * (BigInt(units) * 100n + BigInt(cents)) + delta;
          const a = v < 0n ? -v : v;
          return `:62F:${v < 0n ? 'D' : 'C'}${date}EUR${a / 100n},${(a % 100n).toString().padStart(2, '0')}`;
        });
        await expect(importStatement(db, 'sandbox', Buffer.from(text), 'off.sta')).rejects.toThrow(/does not balance/);
        expect(await storedCount()).toBe(0);
        const r = await importStatement(db, 'sandbox', Buffer.from(text), 'off.sta', { acceptUnbalanced: true });
        expect(r).toMatchObject({ statementsUnbalanced: 1, linesNew: s.days.reduce((n, d) => n + d.entries.length, 0) });
        const findings = await db.sql<{ entity_id: string; subject: string; difference: string }[]>`
          select entity_id, subject, evidence->>'difference_cents' as difference from discrepancies where kind = 'statement_unbalanced'`;
        expect(findings).toEqual([{ entity_id: String(r.statementId), subject: String(s.days.length - 1), difference: String(delta) }]);
        expect(await storedTotals(s.account)).toEqual(booked(s.days));
      }),
      { numRuns: 20 },
    );
  }, 120_000);
});
