import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { upsertOrdersPages } from '../../src/poller/upsert.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Database } from '../../src/db/database.js';
import type { TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { GRACE, at, eventTime, orderEvent, pollRun } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('orphan_resolve_reason');

function passWith(database: Database, now: Date, graceSeconds: number) {
  return runReconcilePass(
    { config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: graceSeconds }, log: silentLogger(), database, ...testMetrics(database, 'sandbox') },
    now,
  );
}

const history = async (db: TestDatabase, id: number) =>
  db.sql<{ from_status: string | null; to_status: string; actor: string; reason: string }[]>`
    select from_status::text, to_status::text, actor, reason from discrepancy_history where discrepancy_id = ${id} order by id`;

describe('orphan_webhook resolved without any poll listing the order', () => {
  it('says why truthfully: not "a poll listed the order" when no poll listed it since the finding', withDb(async (db) => {
    const order = randomUUID();
    // An early complete run listed the order once; its webhooks came later, and the latest
    // complete run (begun well past the grace period) did not list it: an orphan.
    const early = await pollRun(db, at(0));
    await upsertOrdersPages(db.sql, 'sandbox', early, [{ orders: [{ uuid: order, state: 'confirmed', external_reference_id: 'ORD-1' }], observedAt: at(0) }]);
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(5), receivedAt: at(10) });
    await pollRun(db, at(2 * GRACE));
    await passWith(db, at(2 * GRACE + 200), GRACE);
    const [orphan] = await db.sql<{ id: number; status: string }[]>`select id::int, status::text from discrepancies where kind = 'orphan_webhook'`;
    expect(orphan?.status).toBe('open');

    // A pass with a longer grace period cannot prove it: resolved. No poll listed the order since.
    const longer = 10 * GRACE;
    const resolving = await passWith(db, at(2 * GRACE + 300), longer);
    expect(resolving.resolved).toBe(1);
    const last = (await history(db, orphan!.id)).at(-1)!;
    expect(last).toMatchObject({ from_status: 'open', to_status: 'resolved', actor: 'reconciler' });
    // lifecycle.ts resolveCleared: "what cleared it recorded ... so a person can see why the machine closed it".
    expect(last.reason).not.toBe('a poll listed the order');
    expect(last.reason).toBe(`not proven with the grace period of ${longer} s`);
  }));
});
