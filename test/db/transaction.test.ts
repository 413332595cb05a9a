import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { transaction } from '../../src/db/transaction.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * transaction() (src/db/transaction.ts): a transaction whose connection dies under it rejects and
 * leaves the process and its pool working, where postgres.js 3.4.9's own begin() ends the process.
 */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function child(how: 'begin' | 'transaction', url: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'test/db/transaction-child.ts', url, how], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
}

let db: TestDatabase;
useTestDatabase('transaction', (d) => (db = d), { migrate: false });

describe('a transaction whose connection dies under it', () => {
  it('rejects with the lost connection, the process lives on, and the pool answers again', { timeout: 90_000 }, () => {
    const run = child('transaction', db.url);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const { rejected, after } = JSON.parse(run.stdout) as { rejected: string[]; after: (number | string)[][] };
    expect(rejected).toEqual(['CONNECTION_CLOSED', 'CONNECTION_CLOSED', 'CONNECTION_CLOSED']);
    // The pool's next query on the reconnected connection may still get the old session's FATAL
    // (postgres.js keeps the ErrorResponse): a transient error the callers retry. Then it answers.
    for (const round of after) for (const answer of round) expect([1, 2, 3, '57P01']).toContain(answer);
    expect(after.filter((_, i) => i % 3 === 2)).toEqual([[1, 2, 3], [1, 2, 3], [1, 2, 3]]);
  });

  it('still ends the process through postgres.js\'s own begin(): when this fails, the fix is released and transaction() can go', { timeout: 90_000 }, () => {
    const run = child('begin', db.url);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/TypeError: Cannot read properties of null \(reading 'write'\)\n\s+at Immediate\.nextWrite/);
  });
});

describe('transaction() otherwise', () => {
  it('commits what the body wrote and returns its value; a failed body rolls back at once', async () => {
    await db.sql`create table if not exists tx_rows (n int not null)`;
    expect(await transaction(db.sql, async (tx) => {
      await tx`insert into tx_rows (n) values (1)`;
      return 'done';
    })).toBe('done');
    const started = performance.now();
    await expect(transaction(db.sql, async (tx) => {
      await tx`insert into tx_rows (n) values (2)`;
      await tx`select 1 / 0`;
    })).rejects.toMatchObject({ code: '22012' });
    expect(performance.now() - started).toBeLessThan(900);
    expect(await db.sql`select n from tx_rows order by n`).toEqual([{ n: 1 }]);
  });

  it('rolls back a body that failed with what looks like a lost connection when its own connection stays open', async () => {
    await db.sql`create table if not exists tx_rows (n int not null)`;
    const started = performance.now();
    await expect(transaction(db.sql, async (tx) => {
      await tx`insert into tx_rows (n) values (3)`;
      // As a lock session's client reports its lost connection.
      throw Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' });
    })).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(await db.sql`select n from tx_rows where n = 3`).toEqual([]);
    expect(await db.sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`).toEqual([{ n: 0 }]);
  });
});
