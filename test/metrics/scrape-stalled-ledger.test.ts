import { afterAll, describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { startProxy, type Proxy } from '../helpers/tcp-proxy.js';

/**
 * high-availability.md: "While there is no writable primary ... bnpl_recon_database_up is 0", and
 * BnplReconDatabaseDown (`bnpl_recon_database_up == 0` for 2 m) is the page for it;
 * ledger-health.ts: "1 when this scrape's read succeeded within `timeoutMs` ... else 0".
 *
 * When the database stops answering without closing the connections (a primary whose host died
 * or was partitioned away: no RST), the scrape must still answer, with database_up 0, within a
 * scrape timeout (Prometheus' default 10 s): every scrape-time read of the ledger is waited for
 * 2 s at most (metrics/ledger-health.ts LedgerReads.track).
 */

let db: TestDatabase;
let proxy: Proxy | undefined;
let viaProxy: Database | undefined;
afterAll(async () => {
  await proxy?.close();
  await viaProxy?.close(0).catch(() => undefined);
});

describe('/metrics while the database stops answering', () => {
  it('answers within a scrape timeout with bnpl_recon_database_up 0', { timeout: 60_000 }, async () => {
    db = await createTestDatabase('ops_frozen_scrape');
    proxy = await startProxy(new URL(db.url));
    viaProxy = databaseOver(createSqlClient(proxy.url, { poolMax: 4 }));
    const { registry } = testMetrics(viaProxy);
    // A healthy scrape first: the pool has its connections.
    const healthy = await registry.metrics();
    expect(healthy).toMatch(/^bnpl_recon_database_up 1$/m);

    proxy.freeze();
    const started = Date.now();
    const outcome = await Promise.race([
      registry.metrics().then((text) => ({ answered: true, databaseUp: /^bnpl_recon_database_up (\S+)$/m.exec(text)?.[1] })),
      new Promise<{ answered: false }>((r) => setTimeout(() => r({ answered: false }), 10_000)),
    ]);
    expect({ ...outcome, withinMs: 10_000 }).toEqual({ answered: true, databaseUp: '0', withinMs: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  /**
   * The same without any outage: a lock on `discrepancies` (a migration's ALTER TABLE during a
   * rolling update, a VACUUM FULL, a REINDEX without CONCURRENTLY) makes every replica's /metrics
   * wait with it, so every target fails its scrapes and BnplReconDown pages for a healthy fleet.
   */
  it('answers within a scrape timeout while discrepancies is locked', { timeout: 60_000 }, async () => {
    const locked = await createTestDatabase('ops_locked_scrape');
    const { registry } = testMetrics(locked);
    expect(await registry.metrics()).toMatch(/^bnpl_recon_database_up 1$/m);
    const blocker = await locked.sql.reserve();
    try {
      await blocker`begin`;
      await blocker`lock table discrepancies in access exclusive mode`;
      const outcome = await Promise.race([
        registry.metrics().then(() => 'answered'),
        new Promise<string>((r) => setTimeout(() => r('no answer within 10 s'), 10_000)),
      ]);
      expect(outcome).toBe('answered');
    } finally {
      await blocker`rollback`;
      blocker.release();
    }
  });
});
