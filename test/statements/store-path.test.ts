import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { storeStatement } from '../../src/statements/overlap.js';
import { createStaging } from '../../src/statements/staging.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Which way overlap.ts stores a statement: whole, in one statement, when none of its entries can
 * be paired with a stored one, and staged and matched by the rules otherwise. Both ways must store
 * the same (the overlap, property and fuzz tests hold the results); this test holds that each way
 * is taken when it should be, by what the import's staging table holds afterwards in the same
 * transaction. The April statements (test/statements/banks/period-april.*) are one account's 1 and
 * 2 April 2026.
 */
const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));

let db: TestDatabase;
useTestDatabase('stmt_store_path', (d) => (db = d));

/** Stores the file's first statement as the import does, and returns how many entries its staging table holds after, and the counts. */
async function store(bytes: Buffer): Promise<{ staged: number; counts: { new: number; known: number; overlap: number } }> {
  const parsed = parseStatement(bytes);
  const section = parsed.sections[0]!;
  return db.sql.begin(async (tx) => {
    const staging = await createStaging(tx);
    const [s] = await tx<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, format, line_count, key_format) values ('sandbox', ${'f'.repeat(64)}, ${parsed.format}, 0, 2) returning id`;
    const counts = await storeStatement(tx, staging, 'sandbox', Number(s!.id), 0, section, parsed.lines.filter((l) => l.section === 0), 0);
    const [n] = await tx<{ n: number }[]>`select count(*)::int as n from import_entries`;
    // Nothing of it stays: each case starts from the ledger as the case before left it.
    throw Object.assign(new Error('rolled back'), { result: { staged: n!.n, counts } });
  }).catch((error: { result?: { staged: number; counts: { new: number; known: number; overlap: number } } }) => {
    if (!error.result) throw error;
    return error.result;
  });
}

describe('the way a statement is stored', () => {
  it('a statement of days no stored statement of its account has is stored whole, without staging', async () => {
    await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods cascade`;
    expect(await store(file('period-april.camt053.xml'))).toEqual({ staged: 0, counts: { new: 7, known: 0, overlap: 0 } });
  });

  it('the same statement again, or another of its days, is staged and matched', async () => {
    await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods cascade`;
    await importStatement(db, 'sandbox', file('period-april.camt053.xml'), 'april.xml');
    // Its identity is stored: rule 1.
    expect(await store(Buffer.from(file('period-april.camt053.xml').toString('utf8').replace(/\n\s*/g, '')))).toEqual({
      staged: 5, counts: { new: 0, known: 7, overlap: 0 },
    });
    // The MT940 of 1 April (its salary batch as one line, and the payout): the account's stored day, rules 2 and 3.
    expect(await store(file('period-april.sta'))).toEqual({ staged: 2, counts: { new: 0, known: 0, overlap: 2 } });
  });
});
