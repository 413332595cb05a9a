import { expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';
import { importStatement } from '../../src/statements/import.js';
import { statementKeyPrefix } from '../../src/statements/line-key.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * A CSV that names no account (N26, Revolut, Wise, PayPal and Monzo write no account column) is
 * recognised by its bookings alone (csv.ts section()). Its identity was the period and a digest of
 * dates, amounts, currencies, directions and references: two accounts' exports with an equal credit
 * on an equal day were "the same statement imported again", and the second's booking was never
 * stored. The lines' counterparties and remittances are now part of it; a statement stored under
 * the former identity is still recognised (overlap.ts matchFormer) where its texts are the file's.
 */
let db: TestDatabase;
useTestDatabase('stmt_csv_accountless_identity', (d) => (db = d));

const first = 'booking_date;amount;currency;name;remittance\n2026-03-01;100,00;EUR;Kunde A;Rechnung RE-1\n';
const second = 'booking_date;amount;currency;name;remittance\n2026-03-01;100,00;EUR;BNPL Provider GmbH;Auszahlung PO2026030100000077\n';

it("stores the booking of a second account-less CSV whose booking texts differ from the first's, instead of counting it as already known", async () => {
  await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods cascade`;
  const a = await importStatement(db, 'sandbox', Buffer.from(first), 'account-1.csv');
  expect(a.linesNew).toBe(1);
  const b = await importStatement(db, 'sandbox', Buffer.from(second), 'account-2.csv');
  expect(b).toMatchObject({ linesRead: 1, linesNew: 1, linesKnown: 0 });
  const stored = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where sepa_reference = 'PO2026030100000077'`;
  expect(stored[0]!.n).toBe(1);
  // The same export again, in other bytes: known by its position, nothing stored twice.
  const again = await importStatement(db, 'sandbox', Buffer.from(first.replace(/\n/g, '\r\n')), 'account-1-again.csv');
  expect(again).toMatchObject({ linesRead: 1, linesNew: 0, linesKnown: 1 });
});

it('still knows a statement stored under the former identity (without texts) when it comes again, and not another account\'s equal booking', async () => {
  await db.sql`truncate bank_statements, statement_lines, statement_entries, statement_periods cascade`;
  await importStatement(db, 'sandbox', Buffer.from(first), 'account-1.csv');
  // Rewritten as an import before this change stored it: its keys under the identity without texts.
  const section = parseStatement(first).sections[0]!;
  expect(section.formerIdentity).toBeDefined();
  const now = statementKeyPrefix(section);
  const before = statementKeyPrefix({ ...section, identity: section.formerIdentity! });
  await db.sql`update statement_entries set entry_key = replace(entry_key, ${now}, ${before}), lines_entry_key = replace(lines_entry_key, ${now}, ${before})`;
  await db.sql`update statement_lines set entry_key = replace(entry_key, ${now}, ${before}), position_key = replace(position_key, ${now}, ${before}), line_key = replace(line_key, ${now}, ${before})`;
  const again = await importStatement(db, 'sandbox', Buffer.from(first.replace(/\n/g, '\r\n')), 'account-1-again.csv');
  expect(again).toMatchObject({ linesRead: 1, linesNew: 0, linesKnown: 1 });
  const other = await importStatement(db, 'sandbox', Buffer.from(second), 'account-2.csv');
  expect(other).toMatchObject({ linesRead: 1, linesNew: 1, linesKnown: 0 });
  const [lines] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines`;
  expect(lines!.n).toBe(2);
});
