import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importStatement, type ImportOptions } from '../../src/statements/import.js';
import { StatementFormatError } from '../../src/statements/types.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

// A large MT940 is read in a thread of its own (src/statements/read-thread.ts). Here every file
// goes through it (readThreadFromBytes 0) in the production environment, and through the main
// thread in the sandbox, of one database: the two must store the same rows, say the same, and
// refuse with the same words.

let db: TestDatabase;
useTestDatabase('statements_read_thread', (database) => (db = database));

const THREAD: ImportOptions = { readThreadFromBytes: 0 };
const MAIN: ImportOptions = { readThreadFromBytes: Number.MAX_SAFE_INTEGER };

/** An MT940 of `statements` daily messages of `perStatement` bookings each, balanced unless `tamper` changes it. */
function mt940(statements: number, perStatement: number, tamper: (s: number, k: number, cents: number) => number = (_s, _k, c) => c, month = '03'): Buffer {
  const dec = (cents: number) => `${Math.floor(cents / 100)},${String(cents % 100).padStart(2, '0')}`;
  const out: string[] = [];
  let balance = 100_000;
  for (let s = 0; s < statements; s += 1) {
    const day = `26${month}${String(s + 1).padStart(2, '0')}`;
    out.push(':20:STARTUMS', ':25:50010517/5407324931', `:28C:${s + 1}/1`, `:60F:C${day}EUR${dec(balance)}`);
    let close = balance;
    for (let k = 0; k < perStatement; k += 1) {
      const cents = 100 + ((s * perStatement + k) % 997);
      close += k % 3 === 0 ? -cents : cents;
      out.push(
        `:61:${day}${day.slice(2)}${k % 3 === 0 ? 'D' : 'C'}${dec(tamper(s, k, cents))}NTRFNONREF//B${s}-${k}`,
        `:86:166?00SEPA-GUTSCHRIFT?20EREF+E2E-${s}-${k}?21SVWZ+Invoice ${k}?31DE89370400440532013000?32Counterparty ${k % 7}`,
      );
    }
    out.push(`:62F:${close < 0 ? 'D' : 'C'}${day}EUR${dec(Math.abs(close))}`, '-');
    balance = close;
  }
  return Buffer.from(out.join('\r\n'));
}

/** Every stored line and entry of an environment, without what differs by environment and import (ids, times). */
async function storedRows(environment: 'sandbox' | 'production') {
  const lines = await db.sql`
    select position_key, line_key, entry_key, entry_index, tx_index, account_iban, booking_date::text, value_date::text, amount_cents::text,
           currency, direction::text, counterparty_iban, counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference
    from statement_lines where environment = ${environment} order by position_key`;
  const entries = await db.sql`
    select entry_key, account_iban, booking_date::text, currency, direction::text, amount_cents::text, entry_reference, lines_entry_key, match
    from statement_entries where environment = ${environment} order by entry_key`;
  const periods = await db.sql`
    select p.section_index, p.period_from, p.period_to, p.account_iban, p.first_whole_day::text, p.last_whole_day::text
    from statement_periods p join bank_statements b on b.id = p.statement_id where p.environment = ${environment}
    order by b.id, p.section_index`;
  return { lines: [...lines], entries: [...entries], periods: [...periods] };
}

/** An import's result without what differs by environment and import. */
const said = ({ statementId: _id, unbalancedFindings, ...rest }: Awaited<ReturnType<typeof importStatement>>) => ({ ...rest, unbalancedFindings: unbalancedFindings.length });

async function bothWays(file: Buffer, name: string, options: ImportOptions = {}) {
  const main = await importStatement(db, 'sandbox', file, name, { ...options, ...MAIN }).then(said, (e: unknown) => e);
  const thread = await importStatement(db, 'production', file, name, { ...options, ...THREAD }).then(said, (e: unknown) => e);
  return { main, thread };
}

const banks = new URL('./banks/', import.meta.url);
const bankMt940 = readdirSync(banks).filter((f) => f.endsWith('.sta'));

describe('an MT940 read in a thread of its own', () => {
  it('stores what the main thread stores, file by file: banks of four countries, then 28 days of 400 bookings', async () => {
    expect(bankMt940.length).toBeGreaterThanOrEqual(4);
    for (const name of bankMt940) {
      const { main, thread } = await bothWays(readFileSync(new URL(name, banks)), name);
      expect(thread, name).toEqual(main);
    }
    const { main, thread } = await bothWays(mt940(28, 400), 'march.sta');
    expect(main).toMatchObject({ statements: 28, linesRead: 11_200 });
    expect(thread).toEqual(main);
    const threaded = await storedRows('production');
    expect(threaded.lines.length).toBeGreaterThan(11_200);
    expect(threaded).toEqual(await storedRows('sandbox'));
  });

  it('reads the lines of a statement it cannot copy whole when asked: a longer export of stored days, and a corrected one refused', async () => {
    const first = await bothWays(mt940(3, 200, undefined, '04'), 'april.sta');
    expect(first.thread).toEqual(first.main);
    // The second statement's second and third bookings (credits) shifted by a cent each way: its balances, and so its identity, unchanged.
    const corrected = await bothWays(mt940(6, 200, (s, k, cents) => (s === 1 && k === 1 ? cents + 1 : s === 1 && k === 2 ? cents - 1 : cents), '04'), 'april-corrected.sta');
    expect(corrected.main).toBeInstanceOf(StatementFormatError);
    expect(corrected.thread).toBeInstanceOf(StatementFormatError);
    expect((corrected.thread as Error).message).toBe((corrected.main as Error).message);
    expect((corrected.thread as Error).message).toMatch(/^statement 2 of the file was imported before \(from april\.sta\)/);
    const longer = await bothWays(mt940(6, 200, undefined, '04'), 'april-longer.sta');
    expect(longer.main).toMatchObject({ statements: 6, linesRead: 1200, linesKnown: 600, linesNew: 600 });
    expect(longer.thread).toEqual(longer.main);
    expect(await storedRows('production')).toEqual(await storedRows('sandbox'));
  });

  it('refuses what the main thread refuses, in its words, and stores nothing of the file', async () => {
    const count = async () =>
      (await db.sql<{ n: number }[]>`select (select count(*) from statement_lines where environment = 'production')::int as n`)[0]!.n;
    const before = await count();
    const cases: [string, Buffer, ImportOptions, RegExp][] = [
      ['a fifth statement off by 0.01', mt940(6, 300, (s, k, cents) => (s === 4 && k === 7 ? cents + 1 : cents), '05'), {}, /^MT940 message 5 \(:28C: 5\/1\) does not balance/],
      // Bookings of 1.00 to 10.96: the first over 10.00 is the fourth statement's second.
      ['a booking over STATEMENT_MAX_AMOUNT_CENTS', mt940(4, 300, undefined, '06'), { maxAmountCents: 1_000n }, /^refused\.sta: MT940 message 4 :61: 2: amount of 1001 cents \(EUR\) is over STATEMENT_MAX_AMOUNT_CENTS \(1000\)$/],
      // The over-limit booking's statement and a broken message after it, in one slice of the
      // reader's text: each thread reports the error of the parse, before any statement of the slice is staged.
      ['a booking over the limit, then a broken :61: in the same slice', Buffer.concat([mt940(4, 50, undefined, '09'), Buffer.from('\r\n:20:STARTUMS\r\n:25:50010517/5407324931\r\n:28C:5/1\r\n:60F:C260905EUR1,00\r\n:61:2609050905QX1,00NTRF\r\n:62F:C260905EUR1,00\r\n-\r\n')]),
        { maxAmountCents: 250n }, /^(?!.*STATEMENT_MAX_AMOUNT_CENTS).*message 5/],
      ['a NUL byte after the first statement', Buffer.concat([mt940(1, 300, undefined, '07'), Buffer.from('\r\n\0'), mt940(2, 10, undefined, '08')]), {}, /binary/i],
    ];
    for (const [what, file, options, message] of cases) {
      const { main, thread } = await bothWays(file, 'refused.sta', options);
      expect(main, what).toBeInstanceOf(StatementFormatError);
      expect((main as Error).message, what).toMatch(message);
      expect(thread, what).toBeInstanceOf(StatementFormatError);
      expect((thread as Error).message, what).toBe((main as Error).message);
    }
    expect(await count()).toBe(before);
  });
});
