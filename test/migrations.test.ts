import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver } from '../src/db/database.js';
import { applyMigrations, ledgerSchemaStatus, migrationsAreCurrent, MIGRATIONS_FOLDER } from '../src/ledger/migrate.js';
import { silentLogger } from '../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

/** The shell block of docs/upgrading.md's "Rolling back", with its example dump file replaced by `dump`. */
async function documentedRestore(dump: string): Promise<string> {
  const doc = await readFile(join(import.meta.dirname, '..', 'docs', 'upgrading.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Rolling back'));
  const block = /```sh\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 3)))?.[1];
  expect(block, 'a sh block in "Rolling back"').toBeDefined();
  expect(block).toMatch(/bnpl-recon-\d{4}-\d{2}-\d{2}\.dump/);
  return block!.replace(/bnpl-recon-\d{4}-\d{2}-\d{2}\.dump/g, `'${dump}'`);
}

/** The migrations folder with its journal cut after `tag`: the schema of an older release. */
async function migrationsUpTo(folder: string, tag: string): Promise<string> {
  const dir = join(folder, 'migrations');
  await cp(MIGRATIONS_FOLDER, dir, { recursive: true });
  const journalPath = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === tag);
  expect(last).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, last + 1);
  await writeFile(journalPath, JSON.stringify(journal));
  return dir;
}

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

  // docs/upgrading.md, "Rolling back": past a contract migration, the backup taken before the
  // migrate is restored. `pg_restore --clean`, documented before, dropped only what the backup held:
  // it exited 1 (types still in use) and the next upgrade failed at 0012's CREATE TABLE
  // "webhook_applied_events".
  it('the restore docs/upgrading.md documents for a rollback past a contract migration exits 0, brings back the backup, and the ledger migrates again', { timeout: 120_000 }, async () => {
    const folder = await mkdtemp(join(tmpdir(), 'bnpl-rollback-'));
    const db = await createTestDatabase('rollback_restore', { migrate: false });
    try {
      // The ledger of the release before 0012 (a contract migration), with a delivery in it.
      await migrate(db.db, { migrationsFolder: await migrationsUpTo(folder, '0011_reparse') });
      await db.sql`
        insert into webhook_deliveries (delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic, parse_status, applied, parser_version)
        values (${randomUUID()}, 'sandbox', '2026-10-02T00:00:00Z', '{}'::jsonb, ${Buffer.from('{}')}, true, null, 'invalid_shape', false, 0)`;
      const dump = join(folder, 'bnpl-recon-backup.dump');
      // "Before a migration: back up"
      const dumped = spawnSync('pg_dump', ['--format=custom', `--file=${dump}`, db.url], { encoding: 'utf8' });
      expect(dumped.status, dumped.stderr).toBe(0);
      await applyMigrations(db, silentLogger());
      // Every replica stopped: the test's own connections closed too.
      await db.close();
      const restored = spawnSync('bash', ['-e', '-c', await documentedRestore(dump)], { encoding: 'utf8', env: { ...process.env, DATABASE_URL: db.url } });
      expect({ status: restored.status, errors: restored.stderr.split('\n').filter((l) => /error/i.test(l)) }).toEqual({ status: 0, errors: [] });
      // The restored ledger is the backup: the schema before 0012, the delivery in it.
      const reopened = databaseOver(createSqlClient(db.url, { poolMax: 2 }));
      try {
        const [kind] = await reopened.sql<{ kind: string; n: number }[]>`
          select (select relkind::text from pg_class where relname = 'webhook_deliveries' and relnamespace = 'public'::regnamespace) as kind,
                 (select count(*)::int from webhook_deliveries) as n`;
        expect(kind).toEqual({ kind: 'r', n: 1 });
        expect((await ledgerSchemaStatus(reopened)).state).toBe('behind');
        // Later, the newer release is deployed again and migrates.
        await expect(applyMigrations(reopened, silentLogger())).resolves.toContain('0012_partition_deliveries');
        expect((await ledgerSchemaStatus(reopened)).state).toBe('current');
        const [n] = await reopened.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
        expect(n!.n).toBe(1);
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
