import { describe, expect, it } from 'vitest';
import { runReparse } from '../../src/reparse/run.js';
import { silentLogger } from '../../src/log/logger.js';
import type { TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { storeAsOldParser } from '../reparse/old-deliveries.js';
import { pass } from '../reconcile/fixtures.js';
import { databasePerTest } from '../reconcile/helpers.js';

const withDb = databasePerTest('rv_reparse_dup');

const duplicateDeliveries = async (db: TestDatabase) =>
  [...await db.sql<{ status: string }[]>`select status::text from discrepancies where kind = 'duplicate_delivery'`];

/**
 * Two deliveries of one order/confirmed event, stored two days ago by an older release: the first
 * parsed, the retry refused by the old parser (invalid_shape). A reparse now classifies the retry.
 */
async function ledger(db: TestDatabase): Promise<void> {
  const body = JSON.stringify(samplePayload('order/confirmed', 1));
  await storeAsOldParser(db, [
    { body },
    { body, old: { status: 'invalid_shape', topic: 'order/confirmed', error: 'an old parser refused it' } },
  ]);
  await db.sql`update webhook_deliveries set received_at = now() - interval '2 days'`;
  await db.sql`update order_events set received_at = now() - interval '2 days'`;
}

const reparse = (db: TestDatabase) =>
  runReparse({ database: db, log: silentLogger(), ...testMetrics(db) }, { environment: 'sandbox', status: 'unparsed', dryRun: false, trigger: 'command' });

describe('duplicate_delivery after a reparse', () => {
  it('a retry that a reparse recognises is recorded, as a fresh ledger records it', withDb(async (db) => {
    await ledger(db);
    // The daemon has been reconciling all along (a pass before the reparse).
    await pass(db, new Date());
    const summary = await reparse(db);
    expect(summary.outcomes.duplicate).toBe(1);
    const after = await pass(db, new Date(Date.now() + 1000));
    expect(after.mode).toBe('full'); // the pass after a reparse that changed deliveries is full

    // The same ledger, reparsed before any pass: its first pass records the retry.
    await withDb(async (fresh) => {
      await ledger(fresh);
      expect((await reparse(fresh)).outcomes.duplicate).toBe(1);
      await pass(fresh, new Date());
      expect(await duplicateDeliveries(fresh)).toEqual([{ status: 'resolved' }]);
    })();

    expect(await duplicateDeliveries(db)).toEqual([{ status: 'resolved' }]);
  }));
});
