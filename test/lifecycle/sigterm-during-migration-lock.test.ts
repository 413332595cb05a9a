import { afterAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';
import { waitFor } from '../helpers/wait.js';

/**
 * operating.md: "The first SIGTERM ... closes the pool (within SHUTDOWN_TIMEOUT_MS), then exits 0."
 * A replica that is waiting for the migrations lock at start (another replica migrating) and gets
 * SIGTERM (a rollout, a scale-down) must still exit.
 */
describe('SIGTERM while start waits for the migrations lock', () => {
  let db: TestDatabase;
  const children: CliChild[] = [];
  let holder: ReturnType<typeof createSqlClient> | undefined;
  afterAll(async () => {
    for (const c of children) c.kill();
    await holder?.end({ timeout: 2 });
  });

  it('exits within SHUTDOWN_TIMEOUT_MS', { timeout: 60_000 }, async () => {
    db = await createTestDatabase('ops_sigterm_migrate');
    holder = createSqlClient(db.url, { poolMax: 1 });
    await holder`select pg_advisory_lock(${lockKey('migrations').toString()}::bigint)`;
    const child = spawnCli(
      ['start'],
      cleanEnv({
        DATABASE_URL: db.url,
        PORT: '0',
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        PROVIDER_BASE_URL: 'http://127.0.0.1:9',
        PROVIDER_API_KEY: 'test-key',
        WEBHOOK_SECRET: 'f3a9c1e7b2d84a6f9e0c5b7a1d3f8e2c',
        SHUTDOWN_TIMEOUT_MS: '3000',
      }),
    );
    children.push(child);
    // The daemon waits for the lock: it says so (or a session of its waits in pg_locks).
    await waitFor('the daemon waiting for the migrations lock', async () => {
      if (child.logs().some((l) => l.msg === 'waiting for the migrations lock: another process is applying migrations')) return true;
      const rows = await db.sql`select 1 from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`;
      return rows.length > 0 ? true : undefined;
    }, 30_000);
    const sentAt = Date.now();
    child.child.kill('SIGTERM');
    const outcome = await Promise.race([child.exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 3000 + 5000))]);
    expect({ outcome, afterMs: Date.now() - sentAt }).toMatchObject({ outcome: { code: 0 } });
  });
});
