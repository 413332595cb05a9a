import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { parseCsv } from '../reports/csv-reader.js';
import { call, startOperatorServer } from './operator-harness.js';

/**
 * reports.md: "a text field that starts with = + - @ ... gets a leading '; numbers the report
 * computes (cents, amounts, ids) are not touched"; CONTRACT.md: expected/observed are "short
 * machine-readable values (a state, an amount in cents)". An overdrawn account's statement stored
 * unbalanced gives a statement_unbalanced finding whose expected/observed are negative cents: the
 * CSV turns them into text ('-99500), while the positive ones of other findings stay numbers.
 */
let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('op_csv_negative');
  server = await startOperatorServer(db);
  // Opening -1,000.00, one credit of 10.00, closing stated as -995.00 (bookings say -990.00).
  const mt940 = [':20:OVERDRAWN', ':25:NL81ASNB0708271234', ':28C:7', ':60F:D250301EUR1000,00',
    ':61:2503020302C10,00NTRFNONREF//X1', ':86:/EREF/X1/REMI/test/', ':62F:D250302EUR995,00', '-'].join('\r\n');
  await importStatement(db, 'sandbox', Buffer.from(mt940), 'overdrawn.sta', { acceptUnbalanced: true });
});
afterAll(async () => {
  await server?.close();
});

describe('CSV keeps negative cents in expected/observed as numbers', () => {
  it('writes statement_unbalanced expected/observed as -99500 and -99000, as JSON has them', async () => {
    const json = JSON.parse((await call(`${server.url}/api/discrepancies?kind=statement_unbalanced`)).text) as Record<string, string>[];
    expect(json).toHaveLength(1);
    expect([json[0]!.expected, json[0]!.observed]).toEqual(['-99500', '-99000']);
    const csv = parseCsv((await call(`${server.url}/api/discrepancies?kind=statement_unbalanced&format=csv`)).text);
    const header = csv[0]!;
    const record = csv[1]!;
    expect([record[header.indexOf('expected')], record[header.indexOf('observed')]]).toEqual(['-99500', '-99000']);
  });
});
