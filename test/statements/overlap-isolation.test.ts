import { describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase } from '../helpers/database.js';
import { mt940Statement } from './fixtures.js';

// The overlap rule (src/statements/overlap.ts) reads, under the environment's import lock, what the
// lock's previous holder committed. That needs a new snapshot per statement (read committed); the
// clients set it themselves (src/db/database.ts), because a database whose default is repeatable
// read took the snapshot at the lock's request, before the other import committed, and the same
// booking was stored twice.
describe('statement imports on a database whose default isolation is repeatable read', () => {
  it('store a booking that two waiting imports carry once, and link the second', async () => {
    const test = await createTestDatabase('overlap_isolation');
    await test.sql.unsafe(`alter database "${test.name}" set default_transaction_isolation = 'repeatable read'`);
    // New connections see the database's setting; the ones opened before it do not.
    const database = databaseOver(createSqlClient(test.url, { poolMax: 4 }));
    const holder = createSqlClient(test.url, { poolMax: 1 });
    try {
      const [reported] = await database.sql.begin((tx) => tx<{ level: string }[]>`select current_setting('transaction_isolation') as level`);
      expect(reported!.level).toBe('read committed');
      const [databaseDefault] = await test.sql<{ setting: string }[]>`
        select unnest(setconfig) as setting from pg_db_role_setting s join pg_database d on d.oid = s.setdatabase where d.datname = ${test.name}`;
      expect(databaseDefault!.setting).toBe('default_transaction_isolation=repeatable read');

      // Another import of the environment holds the lock while the two below start and wait for it.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const other = holder.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${lockKey('statementImport', 'sandbox').toString()}::bigint)`;
        locked();
        await released;
      });
      await isLocked;
      const mt940 = mt940Statement('1', [{ dc: 'C', cents: 100n, ref: 'R1' }], 100100n);
      const csv = Buffer.from(
        'booking_date,amount,currency,entry_reference,account_iban,remittance\r\n2025-03-02,1.00,EUR,R1,NL81ASNB0708271234,Upload test\r\n',
      );
      const first = importStatement(database, 'sandbox', mt940, 'a.sta');
      const second = importStatement(database, 'sandbox', csv, 'b.csv');
      // Both are waiting for the lock when it is released.
      await expect.poll(async () => (await test.sql<{ n: number }[]>`
        select count(*)::int as n from pg_locks
        where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`)[0]!.n).toBe(2);
      release();
      await other;
      const results = await Promise.all([first, second]);
      expect(results.map((r) => r.linesNew + r.linesOverlap)).toEqual([1, 1]);
      expect(results.reduce((sum, r) => sum + r.linesNew, 0)).toBe(1);
      const [stored] = await test.sql<{ n: number }[]>`select count(*)::int as n from statement_lines`;
      expect(stored!.n).toBe(1);
      const matches = await test.sql<{ match: string; n: number }[]>`select match, count(*)::int as n from statement_entries group by match order by match`;
      expect(matches.map((m) => [m.match, m.n])).toEqual([['new', 1], ['reference', 1]]);
    } finally {
      await holder.end();
      await database.close();
    }
  });
});
