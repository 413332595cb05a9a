import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { StatementFormatError } from '../../src/statements/types.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

// The import stores a file's statements while its reader parses the next ones
// (src/statements/store-pipeline.ts): a refusal in any statement still leaves nothing of the file,
// and names the first statement at fault in the file's order.

let db: TestDatabase;
useTestDatabase('statements_pipelined', (database) => (db = database));

/** An MT940 of `statements` daily messages of `perStatement` bookings each, balanced unless `tamper` changes it. */
function mt940(statements: number, perStatement: number, tamper: (s: number, k: number, cents: number) => number = (_s, _k, c) => c): Buffer {
  const dec = (cents: number) => `${Math.floor(cents / 100)},${String(cents % 100).padStart(2, '0')}`;
  const out: string[] = [];
  let balance = 100_000;
  for (let s = 0; s < statements; s += 1) {
    const day = `2603${String(s + 1).padStart(2, '0')}`;
    out.push(':20:STARTUMS', ':25:50010517/5407324931', `:28C:${s + 1}/1`, `:60F:C${day}EUR${dec(balance)}`);
    let close = balance;
    for (let k = 0; k < perStatement; k += 1) {
      const cents = 100 + ((s * perStatement + k) % 997);
      close += cents;
      out.push(`:61:${day}${day.slice(2)}C${dec(tamper(s, k, cents))}NTRFNONREF//B${s}-${k}`, `:86:166?00SEPA-GUTSCHRIFT?20EREF+E2E-${s}-${k}?21SVWZ+Invoice ${k}`);
    }
    out.push(`:62F:C${day}EUR${dec(close)}`, '-');
    balance = close;
  }
  return Buffer.from(out.join('\r\n'));
}

const stored = async () =>
  (await db.sql<{ files: number; lines: number; entries: number }[]>`
    select (select count(*)::int from bank_statements) as files, (select count(*)::int from statement_lines) as lines,
           (select count(*)::int from statement_entries) as entries`)[0]!;

describe('a file stored while it is read', () => {
  it("refused at its fifth statement (a closing balance off by 0.01) stores nothing of the four before, and names the fifth", async () => {
    const file = mt940(6, 300, (s, k, cents) => (s === 4 && k === 7 ? cents + 1 : cents));
    const before = await stored();
    const error = await importStatement(db, 'sandbox', file, 'six.sta').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StatementFormatError);
    expect((error as Error).message).toMatch(/^MT940 message 5 \(:28C: 5\/1\) does not balance: .*difference -0\.01\)/);
    expect(await stored()).toEqual(before);
  });

  it('refused at its second statement in Postgres (a corrected statement under an old identity) stores nothing of the file, whatever was sent behind it', async () => {
    const first = await importStatement(db, 'sandbox', mt940(3, 200), 'march.sta');
    expect(first).toMatchObject({ statements: 3, linesNew: 600 });
    const before = await stored();
    // The second statement's third and fourth bookings shifted by a cent each way: its balances, and so its identity, unchanged.
    const corrected = mt940(6, 200, (s, k, cents) => (s === 1 && k === 2 ? cents + 1 : s === 1 && k === 3 ? cents - 1 : cents));
    await expect(importStatement(db, 'sandbox', corrected, 'march-corrected.sta')).rejects.toThrow(
      'statement 2 of the file was imported before (from march.sta) with a different booking at entry 3: a corrected statement under the same identity is refused',
    );
    expect(await stored()).toEqual(before);
    // The file as first written, with three more days: its first three statements known, the rest new.
    const longer = await importStatement(db, 'sandbox', mt940(6, 200), 'march-longer.sta');
    expect(longer).toMatchObject({ statements: 6, linesRead: 1200, linesKnown: 600, linesNew: 600, linesOverlap: 0 });
    expect(await stored()).toEqual({ files: before.files + 1, lines: before.lines + 600, entries: before.entries + 600 });
  });
});
