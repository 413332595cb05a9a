import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_MIGRATIONS, decideSchemaStatus, requiredMigration, type JournalEntry } from '../../src/ledger/schema-compat.js';
import { applyMigrations, ledgerSchemaStatus, releaseJournal } from '../../src/ledger/migrate.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from '../e2e/cli.js';

const journal: JournalEntry[] = [
  { tag: '0000_ledger', when: 100 },
  { tag: '0014_arbiter_event_day', when: 200 },
  { tag: '0015_expand', when: 300 },
];

describe('which schema a release can work on', () => {
  it('decides from the applied migrations and the newest release record', () => {
    expect(requiredMigration(journal)?.tag).toBe('0014_arbiter_event_day');
    expect(decideSchemaStatus(journal, [100, 200, 300], undefined)).toEqual({ state: 'current', migration: '0015_expand' });
    expect(decideSchemaStatus(journal, [100, 200], undefined)).toMatchObject({ state: 'behind', reason: 'migrations pending: 0015_expand' });
    // A newer release added an expand migration: it still requires 0014, which this release knows.
    const expanded = decideSchemaStatus(journal, [100, 200, 300, 400], { migrationTag: '0016_more', requiresWhen: 200, requiresTag: '0014_arbiter_event_day', release: '0.3.0 (abc)' });
    expect(expanded.state).toBe('newer_compatible');
    // A newer release contracted the schema: this one cannot work on it and says which migration it lacks.
    const contracted = decideSchemaStatus(journal, [100, 200, 300, 400], { migrationTag: '0016_drop', requiresWhen: 400, requiresTag: '0016_drop', release: '0.3.0 (abc)' });
    expect(contracted.state).toBe('incompatible');
    expect((contracted as { reason: string }).reason).toContain('requires a release that knows migration 0016_drop');
    expect((contracted as { reason: string }).reason).toContain("this release's newest migration is 0015_expand");
    // Unknown migrations and no record of what they need: never assumed compatible.
    expect(decideSchemaStatus(journal, [100, 200, 300, 400], undefined).state).toBe('incompatible');
  });

  it('every contract migration named is one of the release\'s', () => {
    const tags = new Set(releaseJournal().map((e) => e.tag));
    for (const tag of CONTRACT_MIGRATIONS) expect(tags.has(tag), tag).toBe(true);
  });

  describe('on a ledger', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('schema_compat', { migrate: false, poolMax: 2 });
    });
    afterAll(async () => {
    });

    it('migrate says what it applied, records what the schema requires, and refuses a schema from a release it cannot follow', async () => {
      const env = cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', PROVIDER_ENV: 'sandbox' });
      const first = await runCli(['migrate'], env, 240_000);
      expect(first.code).toBe(0);
      const all = releaseJournal().map((e) => `applied ${e.tag}`);
      expect(first.stdout.trim().split('\n')).toEqual([...all, `schema at ${releaseJournal().at(-1)!.tag}`]);
      const again = await runCli(['migrate'], env, 240_000);
      expect(again.stdout.trim().split('\n')).toEqual(['no migrations to apply', `schema at ${releaseJournal().at(-1)!.tag}`]);
      const [record] = await db.sql<{ migration_tag: string; requires_tag: string }[]>`select migration_tag, requires_tag from schema_releases`;
      expect(record).toEqual({ migration_tag: releaseJournal().at(-1)!.tag, requires_tag: requiredMigration(releaseJournal())!.tag });
      expect((await ledgerSchemaStatus(db)).state).toBe('current');

      // A newer release applied an expand migration: this release works on it.
      const latest = releaseJournal().at(-1)!.when;
      const required = requiredMigration(releaseJournal())!;
      await db.sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('future-expand', ${latest + 1000})`;
      await db.sql`insert into schema_releases (migration_when, migration_tag, requires_when, requires_tag, release)
                   values (${latest + 1000}, '0099_future_expand', ${required.when}, ${required.tag}, '9.9.9 (future)')`;
      expect((await ledgerSchemaStatus(db)).state).toBe('newer_compatible');
      await applyMigrations(db, silentLogger());
      expect((await ledgerSchemaStatus(db)).state).toBe('newer_compatible');

      // Then a contract one: not this release's schema any more, and every entry point says why.
      await db.sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('future-contract', ${latest + 2000})`;
      await db.sql`insert into schema_releases (migration_when, migration_tag, requires_when, requires_tag, release)
                   values (${latest + 2000}, '0100_future_contract', ${latest + 2000}, '0100_future_contract', '9.9.10 (future)')`;
      const status = await ledgerSchemaStatus(db);
      expect(status.state).toBe('incompatible');
      const migrate = await runCli(['migrate'], env, 240_000);
      expect(migrate.code).toBe(1);
      expect(migrate.stdout).toContain('requires a release that knows migration 0100_future_contract');
      const report = await runCli(['report', 'discrepancies'], env, 240_000);
      expect(report.code).not.toBe(0);
      expect(report.stderr).toContain('0100_future_contract');
    }, 900_000);
  });
});
