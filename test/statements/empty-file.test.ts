import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
useTestDatabase('statement_empty_file', (d) => (db = d));

describe('an empty statement file', () => {
  it('is refused as empty, not as an unknown format, and nothing is stored', async () => {
    await expect(importStatement(db, 'sandbox', Buffer.alloc(0), 'Kontoauszug.csv')).rejects.toThrow(/^the file is empty$/);
    await expect(importStatement(db, 'sandbox', Buffer.from('\uFEFF\r\n \r\n'), 'Kontoauszug.csv')).rejects.toThrow(/^the file holds only blank space$/);
    const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from bank_statements`;
    expect(stored!.n).toBe(0);
  });

  it('a file of text that is no statement still names the formats it is not', () => {
    expect(() => parseStatement(Buffer.from('hello\n'))).toThrow(/^unknown format: neither CAMT\.053 XML, MT940 nor a CSV/);
  });
});
