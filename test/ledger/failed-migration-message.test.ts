import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { describe, expect, it } from 'vitest';
import { ledgerSchemaStatus, MIGRATIONS_FOLDER, releaseJournal } from '../../src/ledger/migrate.js';
import { createTestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from '../e2e/cli.js';

/** The migrations folder with its journal cut after `tag`: what an older release shipped. */
async function migrationsUpTo(folder: string, tag: string): Promise<string> {
  const dir = join(folder, 'migrations');
  await cp(MIGRATIONS_FOLDER, dir, { recursive: true });
  const journalPath = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.slice(0, journal.entries.findIndex((e) => e.tag === tag) + 1);
  await writeFile(journalPath, JSON.stringify(journal));
  return dir;
}

/**
 * docs/upgrading.md: `bnpl-recon migrate` "prints each migration it applied"; the project's rules:
 * a failure gets an exit status and a message naming the problem. When a migration fails the
 * operator must learn which migration failed and why (Postgres's own reason), to fix it and run
 * migrate again; the statement's text alone does not say what is wrong with it.
 */
describe('a migration that fails', () => {
  it('migrate exits 1 naming the migration that failed and Postgres\'s reason, and leaves the ledger as it was', { timeout: 90_000 }, async () => {
    const folder = await mkdtemp(join(tmpdir(), 'bnpl-upgrade-fail-'));
    const db = await createTestDatabase('failed_migration_message', { migrate: false, poolMax: 2 });
    try {
      const journal = releaseJournal();
      const failing = '0027_statement_balances_kept'; // creates statement_balances
      const at = journal.findIndex((e) => e.tag === failing);
      const before = journal[at - 1]!.tag;
      const after = journal.slice(at).map((e) => e.tag);
      await migrate(db.db, { migrationsFolder: await migrationsUpTo(folder, before) });
      // Something already holds the name the newest migration creates (a DBA's earlier attempt).
      await db.sql`create table statement_balances (note text)`;

      const result = await runCli(['migrate'], cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', PROVIDER_ENV: 'sandbox' }), 60_000);
      expect(result.code).toBe(1);
      const said = result.stdout + result.stderr;
      expect(said, `what migrate said: ${said}`).toMatch(/already exists/);
      expect(said, `what migrate said: ${said}`).toContain(failing);

      // Rolled back as a whole: the ledger is still the older release's, and says what is pending.
      expect(await ledgerSchemaStatus(db)).toEqual({ state: 'behind', reason: `migrations pending: ${after.join(', ')}` });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
