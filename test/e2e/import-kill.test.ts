import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCamt } from '../../bench/statements/files.js';
import { createSqlClient } from '../../src/db/database.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli, spawnCli } from './cli.js';
import { waitFor } from './harness.js';

/**
 * SIGKILL of `bnpl-recon statement import` in the middle of its transaction (seen from
 * pg_stat_activity: the import's session has written rows not yet committed) leaves nothing of the
 * file in the ledger; importing it again afterwards brings every line once.
 */
// Large enough that the import is still writing 1.2 s after it began (the last kill), with room:
// 25,000 entries took about 1.4 s on a quiet machine, and a CI run on Node 24 finished one before
// its kill (2026-11-29). 100,000 take about 5.5 s.
const ENTRIES = 100_000;
let db: TestDatabase;
useTestDatabase('import_kill', (database) => (db = database));
const dir = mkdtempSync(path.join(tmpdir(), 'bnpl-import-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SIGKILL during a statement import', () => {
  it('leaves nothing half-imported, and the next import brings every line once', { timeout: 180_000 }, async () => {
    const file = path.join(dir, 'statement.camt053.xml');
    await writeCamt(file, ENTRIES, 2000);
    const env = cleanEnv({ DATABASE_URL: db.url, RECON_DATA_DIR: dir, PROVIDER_ENV: 'sandbox', LOG_LEVEL: 'info' });
    const observer = createSqlClient(db.url, { poolMax: 1, applicationName: 'import-kill-observer' });
    const counts = async () => {
      const [row] = await observer<{ lines: number; statements: number }[]>`
        select (select count(*)::int from statement_lines) as lines, (select count(*)::int from bank_statements) as statements`;
      return row!;
    };
    try {
      for (let trial = 1; trial <= 3; trial += 1) {
        const cli = spawnCli(['statement', 'import', file], env);
        // Killed once its transaction has written rows (a transaction id) that are not committed.
        const writing = await waitFor('the import writing', async () => {
          if (cli.child.exitCode !== null) throw new Error(`the import ended before it was killed: ${cli.stdout()} ${cli.stderr()}`);
          const [row] = await observer<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() and application_name <> 'import-kill-observer' and backend_xid is not null and query ilike '%statement%'`;
          return row!.n > 0 ? true : undefined;
        }, 60_000, 10);
        expect(writing).toBe(true);
        // Somewhere into the file, not only its first rows (the import is one transaction, or this fails).
        await new Promise((r) => setTimeout(r, trial * 400));
        expect(cli.child.exitCode, 'the import finished before the kill: make the file larger').toBeNull();
        cli.kill();
        await cli.exited;
        // The killed session's transaction is rolled back once Postgres sees its client gone.
        await waitFor('the killed session to end', async () => {
          const [row] = await observer<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name <> 'import-kill-observer'`;
          return row!.n === 0 ? true : undefined;
        }, 20_000);
        expect(await counts(), `after kill ${trial}`).toEqual({ lines: 0, statements: 0 });
      }
      const started = performance.now();
      const done = await runCli(['statement', 'import', file], env, 120_000);
      console.info(`import kill: 3 kills 0.4-1.2 s into the writing left nothing; the whole import then took ${Math.round(performance.now() - started)} ms`);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain(`lines new ${ENTRIES}`);
      expect((await counts()).lines).toBe(ENTRIES);
      const again = await runCli(['statement', 'import', file], env, 120_000);
      expect(again.code, again.stderr).toBe(0);
      expect((await counts()).lines).toBe(ENTRIES);
    } finally {
      await observer.end({ timeout: 2 });
    }
  });
});
