import { describe, expect, it } from 'vitest';
import { runFailover } from './failover.js';
import { postgresServerBin } from './pg-cluster.js';

/**
 * A Postgres failover under load with real servers (test/e2e/failover.ts): the primary SIGKILLed
 * with replication held back 1 s, the standby promoted 1 s later, two daemon replicas with both
 * hosts in DATABASE_URL. With synchronous replication nothing acknowledged is lost; with
 * asynchronous replication what was acknowledged in the held-back second is, and the test says how
 * much. `npm run soak` repeats both with longer load.
 */
const bin = postgresServerBin();
if (!bin) console.warn('failover test skipped: no Postgres server binaries (initdb, postgres, pg_basebackup, pg_ctl) under /usr/lib/postgresql/*/bin or PG_BIN; .ci/run installs them');

describe.skipIf(!bin)('a Postgres failover under load', () => {
  it('synchronous replication: nothing acknowledged lost or applied twice, 2xx again within 15 s of the promotion, jobs run again once', { timeout: 240_000 }, async () => {
    const f = await runFailover({ synchronous: true });
    console.info(`failover (synchronous): ${JSON.stringify({ ...f, daemonStderr: f.daemonStderr.slice(0, 500) })}`);
    expect(f.acknowledged).toBeGreaterThan(50);
    expect(f.acknowledgedLost).toBe(0);
    expect(f.appliedTwice).toBe(0);
    expect(f.missingTypedRows).toBe(0);
    expect(f.acksBeforePromotion).toBe(0);
    expect(f.promotionToFirstAckMs).toBeLessThanOrEqual(15_000);
    // Every answer that was not an acknowledgement was a 503 or none: the provider retries both.
    expect(f.unexpected).toEqual([]);
    expect(Object.keys(f.statuses).filter((s) => !['0', '200', '503'].includes(s))).toEqual([]);
    expect(f.statuses[503] ?? 0).toBeGreaterThan(0);
    expect(f.ledgerUnavailable503).toBeGreaterThan(0);
    // Sampled every 200 ms or so in a window of 1-3 s: at least one of the two signals is seen
    // (both were in most runs; each was missed once).
    expect(f.sawNotReady || f.sawDatabaseDown).toBe(true);
    expect(Object.keys(f.causes).length).toBeGreaterThan(0);
    expect(f.pollRunsAfterPromotion).toBeGreaterThan(0);
    expect(f.reconcileRunsAfterPromotion).toBeGreaterThan(0);
    expect(f.overlappingRuns).toBe(0);
    expect(f.daemonStderr).toBe('');
  });
});
