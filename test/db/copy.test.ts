import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyChunks, copyField, copyRow, copyRows } from '../../src/db/copy.js';
import { transaction } from '../../src/db/transaction.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
useTestDatabase('copy_rows', (d) => (db = d));

type Row = [id: number, body: string | null, amount: bigint, flag: boolean];

/** Copies `rows` into a fresh temporary table in one transaction and reads them back in order. */
function roundTrip(rows: readonly Row[], rowsPerChunk?: number) {
  return transaction(db.sql, async (tx) => {
    await tx`create temporary table copied (id integer primary key, body text, amount bigint not null, flag boolean not null) on commit drop`;
    await copyRows(tx, 'copied', ['id', 'body', 'amount', 'flag'], copyChunks(rows, (r) => copyRow(r), rowsPerChunk));
    const back = await tx<{ id: number; body: string | null; amount: string; flag: boolean }[]>`select id, body, amount::text, flag from copied order by id`;
    return back.map((r): Row => [r.id, r.body, BigInt(r.amount), r.flag]);
  });
}

describe('COPY rows (db/copy.ts)', () => {
  it('writes the text format: escapes, NULL, booleans, bigints', () => {
    expect(copyField('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
    expect(copyField(null)).toBe('\\N');
    expect(copyField('\\N')).toBe('\\\\N');
    expect(copyRow([1, 'x', 9_223_372_036_854_775_807n, true, false, null])).toBe('1\tx\t9223372036854775807\tt\tf\t\\N\n');
  });

  it('stores every row as it was, whatever its text holds, across chunks', async () => {
    // Any string Postgres's text type holds (no NUL), including backslashes, tabs, line breaks, '\.' and '\N'.
    const body = fc.oneof(
      fc.constant(null),
      fc.constantFrom('', '\\', '\\.', '\\N', '\t', '\r\n', 'a\\tb', 'Müller & Söhne', '😀'),
      fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/\0/g, '')),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(body, fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n }), fc.boolean()), { maxLength: 40 }), async (values) => {
        const rows = values.map(([b, amount, flag], i): Row => [i, b, amount, flag]);
        expect(await roundTrip(rows, 7)).toEqual(rows);
      }),
      { numRuns: 60 },
    );
  });

  it('rejects with Postgres\'s own error when it refuses the rows, at the end or midway, and the transaction rolls back', async () => {
    // A unique violation found after the last row was sent: the case postgres.js would leave hanging.
    await expect(roundTrip([[1, 'a', 1n, true], [1, 'b', 2n, false]])).rejects.toThrow(/duplicate key value violates unique constraint/);
    // A field its type refuses, among many rows, so the error comes while rows are still being sent.
    const many = Array.from({ length: 20_000 }, (_, i): Row => [i, `row ${i}`, BigInt(i), i % 2 === 0]);
    const bad = (rows: readonly Row[]) =>
      transaction(db.sql, async (tx) => {
        await tx`create temporary table copied (id integer primary key, body text, amount bigint not null, flag boolean not null) on commit drop`;
        const chunks = copyChunks(rows, (r) => copyRow(r), 100);
        chunks.splice(1, 0, Buffer.from('5\tx\tnot a number\tt\n'));
        await copyRows(tx, 'copied', ['id', 'body', 'amount', 'flag'], chunks);
      });
    await expect(bad(many)).rejects.toThrow(/invalid input syntax for type bigint: "not a number"/);
    // The connection is usable after both.
    expect(await roundTrip([[1, 'after', 3n, true]])).toEqual([[1, 'after', 3n, true]]);
  });
});

describe('bank statements (migration 0024)', () => {
  it('refuses to delete an imported statement', async () => {
    const [s] = await db.sql<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, format, line_count, key_format) values ('sandbox', ${'e'.repeat(64)}, 'mt940', 0, 2) returning id`;
    await expect(db.sql`delete from bank_statements where id = ${s!.id}`).rejects.toThrow(`bank statement ${s!.id} is kept`);
    const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from bank_statements where id = ${s!.id}`;
    expect(n!.n).toBe(1);
  });
});
