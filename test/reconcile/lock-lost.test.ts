import { describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { silentLogger } from '../../src/log/logger.js';
import { leadershipFromGauges } from '../../src/metrics/registry.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { testMetrics } from '../helpers/metrics.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { GRACE } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('reconcile_lock_lost');

describe('reconcile leadership when the pass’s lock session dies mid-pass (a failover, pg_terminate_backend)', () => {
  it('the replica whose lock is gone stops reporting itself reconcile leader and stops its pass at once: two replicas never both lead', { timeout: 60_000 }, withDb(async (db) => {
    const a = databaseOver(createSqlClient(db.url, { poolMax: 3, applicationName: 'lock-lost-rec-a' }));
    const b = databaseOver(createSqlClient(db.url, { poolMax: 3, applicationName: 'lock-lost-rec-b' }));
    const ma = testMetrics(a, 'sandbox');
    const mb = testMetrics(b, 'sandbox');
    const config = { PROVIDER_ENV: 'sandbox' as const, WEBHOOK_GRACE_SECONDS: GRACE };
    const blocker = await db.sql.reserve();
    let passA: Promise<unknown> | undefined;
    let passB: Promise<unknown> | undefined;
    try {
      // A slow pass: the rules wait on a table another session holds (a big ledger does the same by itself).
      await blocker`begin`;
      await blocker`lock table order_events in access exclusive mode`;
      passA = runReconcilePass({ config, log: silentLogger(), database: a, metrics: ma.metrics }, undefined, { origin: 'daemon' }).catch((e: unknown) => e);
      const key = lockKey('reconcile', 'sandbox');
      const lockPid = await waitFor('replica A to hold the reconcile lock', async () => {
        const [row] = await db.sql<{ pid: number }[]>`
          select l.pid from pg_locks l join pg_stat_activity s on s.pid = l.pid
          where l.locktype = 'advisory' and l.granted and s.application_name = 'lock-lost-rec-a'
            and ((l.classid::bigint << 32) | l.objid::bigint) = ${key.toString()}`;
        return row?.pid;
      }, 10_000, 20);
      await waitFor('replica A’s pass to wait on the table', async () => {
        const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = 'lock-lost-rec-a' and wait_event_type = 'Lock'`;
        return row!.n > 0 ? true : undefined;
      }, 10_000, 20);
      expect((await leadershipFromGauges(ma.registry, ['reconcile'])).reconcile).toBe(true);
      // A's lock session dies; B's next tick takes the lock and starts its pass.
      await db.sql`select pg_terminate_backend(${lockPid})`;
      passB = runReconcilePass({ config, log: silentLogger(), database: b, metrics: mb.metrics }, undefined, { origin: 'daemon' }).catch((e: unknown) => e);
      await waitFor('replica B to report itself leader', async () => ((await leadershipFromGauges(mb.registry, ['reconcile'])).reconcile ? true : undefined), 10_000, 20);
      await sleep(2_000);
      const leaderA = (await leadershipFromGauges(ma.registry, ['reconcile'])).reconcile;
      expect(leaderA, 'replica A still reports itself reconcile leader (bnpl_recon_reconcile_lock_held 1, /readyz leader.reconcile true) while replica B holds the lock').toBe(false);
      // A's pass stopped too, while its statement still waited on the table: not at its final fence.
      const stateA = await Promise.race([passA.then((outcome) => ({ outcome })), sleep(0).then(() => 'still running' as const)]);
      expect(stateA, 'replica A’s pass still runs beside replica B’s').not.toBe('still running');
      expect(String(((stateA as { outcome: unknown }).outcome as Error).message)).toContain('reconcile lock lost');
    } finally {
      await blocker`rollback`.catch(() => undefined);
      blocker.release();
      await Promise.all([passA, passB]);
      await Promise.all([a.close(1), b.close(1)]);
    }
  }));
});
