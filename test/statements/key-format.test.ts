import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { entryKey, positionKey, statementKeyPrefix } from '../../src/statements/line-key.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Statements stored with the older key form (bank_statements.key_format null: the sha256 of each
 * key's parts joined by line feeds, line-key.ts) are still found by their position when the same
 * statement comes again: rule 1 of overlap.ts probes the older keys while such a statement exists.
 * The April CAMT.053 (test/statements/banks/period-april.camt053.xml) is imported, its keys are
 * rewritten to the older form as an import before migration 0021 wrote them, and the same statement
 * from other bytes is imported again.
 */
const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let db: TestDatabase;
useTestDatabase('stmt_key_format', (d) => (db = d));

/** Imports the April statement and rewrites its keys to the older form; `keyFormat` is what its bank_statements row then says. */
async function storedInTheOlderForm(keyFormat: number | null): Promise<void> {
  await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods cascade`;
  const bytes = file('period-april.camt053.xml');
  const first = await importStatement(db, 'sandbox', bytes, 'april.xml');
  expect(first).toMatchObject({ linesRead: 7, linesNew: 7 });
  const identity = parseStatement(bytes).sections[0]!.identity;
  const lines = await db.sql<{ id: string; entry_index: number; tx_index: number }[]>`select id, entry_index, tx_index from statement_lines`;
  for (const l of lines) {
    const position = sha256(`position\n${identity}\n${l.entry_index}\n${l.tx_index}`);
    await db.sql`
      update statement_lines set line_key = ${position}, position_key = ${position}, entry_key = ${sha256(`entry\n${identity}\n${l.entry_index}`)}
      where id = ${l.id}`;
  }
  const entries = await db.sql<{ id: string; entry_key: string }[]>`select id, entry_key from statement_entries`;
  for (const e of entries) {
    const older = sha256(`entry\n${identity}\n${Number.parseInt(e.entry_key.split(':')[1]!, 16)}`);
    await db.sql`update statement_entries set entry_key = ${older}, lines_entry_key = ${older} where id = ${e.id}`;
  }
  await db.sql`update bank_statements set key_format = ${keyFormat}`;
}

describe('statement keys', () => {
  it("a statement's keys share its prefix, in the order of its entries and lines", () => {
    const parsed = parseStatement(file('period-april.camt053.xml'));
    const prefix = statementKeyPrefix(parsed.sections[0]!);
    expect(prefix).toMatch(/^[0-9a-f]{32}$/);
    const positions = parsed.lines.map((l) => positionKey(prefix, l));
    expect(positions.slice(0, 3)).toEqual([`${prefix}:00000000:00000000`, `${prefix}:00000000:00000001`, `${prefix}:00000000:00000002`]);
    expect([...positions].sort()).toEqual(positions);
    expect(entryKey(prefix, parsed.lines[3]!)).toBe(`${prefix}:00000001`);
    // Another statement of the same account: another prefix.
    const other = parseStatement(file('period-april.camt053.xml').toString('utf8').replace('<Id>2026-04-02-0004</Id>', '<Id>2026-04-09-0005</Id>'));
    expect(statementKeyPrefix(other.sections[0]!)).not.toBe(prefix);
  });

  it('the same statement again is known by its position through the older keys of a file imported before them', async () => {
    await storedInTheOlderForm(null);
    const flat = Buffer.from(file('period-april.camt053.xml').toString('utf8').replace(/\n\s*/g, ''));
    expect(await importStatement(db, 'sandbox', flat, 'april-again.xml')).toMatchObject({ linesRead: 7, linesNew: 0, linesKnown: 7, linesOverlap: 0 });
    const [n] = await db.sql<{ lines: number; entries: number }[]>`
      select (select count(*)::int from statement_lines) as lines, (select count(*)::int from statement_entries) as entries`;
    // The second file records none of its entries again (rule 1: its identity brought them).
    expect(n).toEqual({ lines: 7, entries: 5 });
  });

  it('the older keys are probed only while a file says it has them (key_format null)', async () => {
    // The same rows, but the file says they have today's keys: rule 1 misses them, and the
    // bank's references and the wholly covered days (rules 2 and 3) find the bookings instead.
    await storedInTheOlderForm(2);
    const flat = Buffer.from(file('period-april.camt053.xml').toString('utf8').replace(/\n\s*/g, ''));
    expect(await importStatement(db, 'sandbox', flat, 'april-again.xml')).toMatchObject({ linesRead: 7, linesNew: 0, linesKnown: 0, linesOverlap: 7 });
  });
});
