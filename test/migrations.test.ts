import { describe, expect, it } from 'vitest';
import { applyMigrations, migrationsAreCurrent } from '../src/ledger/migrate.js';
import { silentLogger } from '../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

describe('migrations', () => {
  let database: TestDatabase | undefined;

  it('apply to an empty database, concurrently and repeatedly, and leave it current', async () => {
    database = await createTestDatabase('migrations', { migrate: false });
    expect(await migrationsAreCurrent(database)).toBe(false);
    // Two "replicas" racing on boot: the advisory lock must serialise them.
    await Promise.all([applyMigrations(database, silentLogger()), applyMigrations(database, silentLogger())]);
    await applyMigrations(database, silentLogger());
    expect(await migrationsAreCurrent(database)).toBe(true);
    const tables = await database.sql<{ table_name: string }[]>`
      select table_name from information_schema.tables where table_schema = 'public' order by 1`;
    expect(tables.map((t) => t.table_name)).toContain('webhook_deliveries');
    expect(tables.map((t) => t.table_name)).toContain('discrepancies');
  });
});
