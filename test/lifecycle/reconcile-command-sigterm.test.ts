import type { Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { sleep, waitFor } from '../helpers/wait.js';

/**
 * The promise (README, docs/operating.md, commands/command.ts): every command shuts down within
 * SHUTDOWN_TIMEOUT_MS (past it: exit 1 naming what did not stop), in-flight work is stopped, the pool
 * closes last, and runs are recorded with an accurate status. A one-off command's body is now the
 * last cleanup before the pool (withContext), and `reconcile` hands the shutdown's signal to its
 * pass. Before, the pass went on waiting on the lock after the pool had closed, the drain counted
 * as done, the process lived until the lock holder let go (36 s with an 8 s SHUTDOWN_TIMEOUT_MS) and
 * left its reconcile_runs row `running`.
 */
const SHUTDOWN_TIMEOUT_MS = 8000;

let locker: Sql | undefined;
const children: CliChild[] = [];
afterAll(async () => {
  for (const c of children) c.kill();
  await locker?.end({ timeout: 2 });
});

describe('SIGTERM to `reconcile` while its pass waits on a lock', () => {
  it('`reconcile`: the pass is stopped and recorded failed by the process itself, within SHUTDOWN_TIMEOUT_MS', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('reconcile_sigterm_drain');
    locker = createSqlClient(db.url, { poolMax: 1, applicationName: 'sigterm-locker' });
    const held = await locker.reserve();
    let child: CliChild | undefined;
    let exit: Awaited<CliChild['exited']> | 'still running' | undefined;
    let tookMs = 0;
    let runId: number | undefined;
    try {
      await held`begin`;
      await held`lock table discrepancies in access exclusive mode`;
      child = spawnCli(['reconcile'], cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) }));
      children.push(child);
      runId = await waitFor('a pass waiting on the lock', async () => {
        const [row] = await db.sql<{ id: number }[]>`
          select r.id::int as id from reconcile_runs r
          where r.status = 'running'
            and exists (select 1 from pg_stat_activity a where a.datname = current_database() and a.wait_event_type = 'Lock' and a.application_name <> 'sigterm-locker')`;
        return row?.id;
      }, 30_000, 50);
      const signalled = Date.now();
      child.child.kill('SIGTERM');
      exit = await Promise.race([child.exited, sleep(SHUTDOWN_TIMEOUT_MS + 5_000).then(() => 'still running' as const)]);
      tookMs = Date.now() - signalled;
    } finally {
      await held`rollback`.catch(() => undefined);
      held.release();
    }
    // Once the lock holder lets go, the process ends by itself: then its record can be read.
    const finalExit = await Promise.race([child!.exited, sleep(20_000).then(() => 'hung' as const)]);
    const [row] = await db.sql<{ status: string; finished: boolean }[]>`select status, finished_at is not null as finished from reconcile_runs where id = ${runId}`;
    // As the daemon's pass on SIGTERM (docs/operating.md): stopped at once, recorded failed.
    expect({ exitWithinDeadlinePlus5s: exit, tookMs: exit === 'still running' ? `> ${tookMs}` : tookMs, finalExit, row }).toMatchObject({
      exitWithinDeadlinePlus5s: { signal: null },
      finalExit: { signal: null },
      row: { status: 'failed', finished: true },
    });
    expect(tookMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
  });
});
