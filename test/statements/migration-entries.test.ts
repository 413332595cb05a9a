import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { applyMigrationFiles } from '../helpers/migrations.js';

/**
 * A ledger whose statement lines were stored before migration 0013 (statement_entries, entry_key):
 * the April CAMT.053 (test/statements/banks/period-april.camt053.xml) as the import between
 * migrations 0009 and 0013 wrote it, its batch split into three lines. After 0013 the batch is one
 * entry of its three lines, so the same statement again adds nothing, and the MT940 of the same
 * days (the batch as one line) links to it.
 */
const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));
/** A line's position as those imports keyed it: the sha256 of its parts joined by line feeds. */
const olderPositionKey = (identity: string, entryIndex: number, txIndex: number) =>
  createHash('sha256').update(`position\n${identity}\n${entryIndex}\n${txIndex}`).digest('hex');

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('stmt_migration_entries', { migrate: false });
  await applyMigrationFiles(db, (f) => f < '0013');
  const parsed = parseStatement(file('period-april.camt053.xml'));
  const section = parsed.sections[0]!;
  const [s] = await db.sql<{ id: string }[]>`
    insert into bank_statements (environment, file_sha256, file_name, format, account_iban, line_count, statement_count)
    values ('sandbox', ${'0'.repeat(64)}, 'april-before.xml', 'camt053', ${parsed.accountIban}, ${parsed.lines.length}, 1) returning id`;
  for (const [i, l] of parsed.lines.entries()) {
    await db.sql`
      insert into statement_lines (environment, statement_id, line_key, position_key, entry_index, tx_index, account_iban, booking_date,
                                   value_date, amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id,
                                   bank_reference, remittance, sepa_reference)
      values ('sandbox', ${s!.id}, ${`old-key-${i}`}, ${olderPositionKey(section.identity, l.entryIndex, l.txIndex)}, ${l.entryIndex}, ${l.txIndex}, ${l.accountIban}, ${l.bookingDate},
              ${l.valueDate}, ${l.amountCents.toString()}, ${l.currency}, ${l.direction}, ${l.counterpartyIban}, ${l.counterpartyName},
              ${l.endToEndId}, ${l.bankReference}, ${l.remittance}, ${l.sepaReference})`;
  }
  await db.sql`
    insert into statement_periods (statement_id, section_index, environment, period_from, period_to)
    values (${s!.id}, 0, 'sandbox', ${section.periodFrom}::timestamptz, ${section.periodTo}::timestamptz)`;
  await applyMigrationFiles(db, (f) => f >= '0013');
}, 60_000);

describe('migration 0013 on lines stored before it', () => {
  it('joins a split batch into one entry with the batch reference, every other line its own entry', async () => {
    const entries = await db.sql<{ cents: string; ref: string | null; lines: number }[]>`
      select e.amount_cents::text as cents, e.entry_reference as ref, (select count(*)::int from statement_lines l where l.entry_key = e.entry_key) as lines
      from statement_entries e order by e.id`;
    expect(entries.sort((a, b) => Number(b.cents) - Number(a.cents))).toEqual([
      { cents: '125000', ref: 'K-0401-2', lines: 1 },
      { cents: '60000', ref: 'BTCH-0401', lines: 3 },
      { cents: '8990', ref: 'K-0402-1', lines: 1 },
      { cents: '450', ref: null, lines: 1 },
      { cents: '450', ref: null, lines: 1 },
    ]);
    const [period] = await db.sql<{ account_iban: string | null }[]>`select account_iban from statement_periods`;
    expect(period!.account_iban).toBe('DE75120300001020304050');
  });

  it('the same statement again adds nothing; the MT940 of its days links to the stored lines', async () => {
    const flat = Buffer.from(file('period-april.camt053.xml').toString('utf8').replace(/\n\s*/g, ''));
    expect(await importStatement(db, 'sandbox', flat, 'april-again.xml')).toMatchObject({ linesRead: 7, linesNew: 0, linesKnown: 7, linesOverlap: 0 });
    expect(await importStatement(db, 'sandbox', file('period-april.sta'), 'april.sta')).toMatchObject({ linesRead: 5, linesNew: 0, linesOverlap: 5 });
    const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines`;
    expect(n!.n).toBe(7);
  });
});
