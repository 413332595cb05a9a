import type { Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { sleep, waitFor } from '../helpers/wait.js';

let locker: Sql | undefined;
const children: CliChild[] = [];
afterAll(async () => {
  for (const c of children) c.kill();
  await locker?.end({ timeout: 2 });
});

/**
 * CONTRACT.md: "Every command ... exits 0 on success, 2 on bad usage or bad configuration ..., and 1
 * on any other failure." A second SIGTERM during a drain exits at once (docs/operating.md: "A
 * second signal exits at once") with 1: it exited 143 (128 + the signal number), a status the
 * contract has no place for, which scripts and supervisors relying on {0, 1, 2} (systemd's
 * RestartPreventExitStatus=2, a wrapper checking `== 1`) would not recognise.
 */
describe('a second SIGTERM while the first drains', () => {
  it('exits with a status the contract knows (1: the drain did not finish)', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('signals_second_signal');
    locker = createSqlClient(db.url, { poolMax: 1, applicationName: 'signals-locker-2' });
    const held = await locker.reserve();
    let exit: Awaited<CliChild['exited']> | 'still running';
    try {
      await held`begin`;
      await held`lock table discrepancies in access exclusive mode`;
      // A command whose drain takes a while: its pass waits on the lock held here.
      const child = spawnCli(['reconcile'], cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '30000' }));
      children.push(child);
      await waitFor('a pass waiting on the lock', async () => {
        const rows = await db.sql`
          select 1 from pg_stat_activity a where a.datname = current_database() and a.wait_event_type = 'Lock' and a.application_name <> 'signals-locker-2'`;
        return rows.length > 0 ? true : undefined;
      }, 30_000, 50);
      child.child.kill('SIGTERM');
      // `reconcile` logs to stderr.
      await waitFor('the drain to begin', () => (child.stderr().includes('"msg":"shutting down"') ? true : undefined), 10_000, 20);
      await sleep(300);
      child.child.kill('SIGTERM');
      exit = await Promise.race([child.exited, sleep(10_000).then(() => 'still running' as const)]);
    } finally {
      await held`rollback`.catch(() => undefined);
      held.release();
    }
    expect(exit).toEqual({ code: 1, signal: null });
  });
});
