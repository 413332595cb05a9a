import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/database.js';
import { GRACE, at, eventTime, orderEvent, pass, pollRun, snapshot } from '../reconcile/fixtures.js';
import { databasePerTest } from '../reconcile/helpers.js';

const withDb = databasePerTest('rv_incr_vs_full');

async function openOrderFindings(db: TestDatabase): Promise<{ kind: string; entity_id: string; status: string }[]> {
  return [...await db.sql<{ kind: string; entity_id: string; status: string }[]>`
    select kind::text, entity_id, status::text from discrepancies where entity_type = 'order' and status in ('open', 'acknowledged') order by kind, entity_id`];
}

/** Builds the same ledger twice; `run` continues after the shared part and returns the findings. */
async function bothWays(
  build: (db: TestDatabase) => Promise<void>,
  finish: (db: TestDatabase, full: boolean) => Promise<void>,
  dbIncr: TestDatabase,
  dbFull: TestDatabase,
) {
  await build(dbIncr);
  await build(dbFull);
  await finish(dbIncr, false);
  await finish(dbFull, true);
  return { incremental: await openOrderFindings(dbIncr), full: await openOrderFindings(dbFull) };
}

describe('an incremental pass reaches what a full pass over the same ledger reaches', () => {
  it('state_mismatch: a poll run that did not complete lists the order after its latest webhook', withDb(async (dbIncr) => {
    await withDb(async (dbFull) => {
      const order = randomUUID();
      const build = async (db: TestDatabase) => {
        // Poll P1 lists the order confirmed; the confirmed webhook arrived before it.
        const p1 = await pollRun(db, at(10));
        await snapshot(db, { order, state: 'confirmed', seenAt: at(10), runId: p1 });
        await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(0), receivedAt: at(1) });
        // Then order/canceled arrives: the latest webhook. No poll has looked since.
        await orderEvent(db, { order, state: 'canceled', eventTime: eventTime(100), receivedAt: at(101) });
        // A full pass: P1 began before the canceled webhook, so nothing is proven (condition 6).
        await pass(db, at(10_000));
        // A later poll run lists the order, still confirmed, long after order/canceled, and then
        // fails (an outage on a later page). The snapshot's last_seen_run_id is this run.
        const failed = await pollRun(db, at(20_000), 'failed');
        await snapshot(db, { order, state: 'confirmed', seenAt: at(20_000), runId: failed });
      };
      const finish = async (db: TestDatabase, full: boolean) => {
        const summary = await pass(db, at(30_000), 'sandbox', { full });
        expect(summary.mode).toBe(full ? 'full' : 'incremental');
      };
      const { incremental, full } = await bothWays(build, finish, dbIncr, dbFull);
      // The failed run's listing is evidence: the incremental pass has the order in scope (scope.ts, clause 6).
      expect(incremental).toEqual(full);
    })();
  }));

  it('orphan_webhook: a poll run that did not complete lists the orphaned order again', withDb(async (dbIncr) => {
    await withDb(async (dbFull) => {
      const order = randomUUID();
      const other = randomUUID();
      const build = async (db: TestDatabase) => {
        const p1 = await pollRun(db, at(0));
        await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: p1 });
        await snapshot(db, { order: other, state: 'confirmed', seenAt: at(0), runId: p1 });
        await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-5), receivedAt: at(-4) });
        await orderEvent(db, { order: other, state: 'confirmed', eventTime: eventTime(-5), receivedAt: at(-4) });
        // Complete run P2, well after the grace period, does not list `order`: orphan.
        const p2 = await pollRun(db, at(2 * GRACE));
        await snapshot(db, { order: other, state: 'confirmed', seenAt: at(2 * GRACE), runId: p2 });
        await pass(db, at(2 * GRACE + 600));
        expect((await openOrderFindings(db)).map((f) => f.kind)).toEqual(['orphan_webhook']);
        // A later run lists `order` again (the API knows it) but fails before its last page.
        const failed = await pollRun(db, at(20_000), 'failed');
        await snapshot(db, { order, state: 'confirmed', seenAt: at(20_000), runId: failed });
      };
      const finish = async (db: TestDatabase, full: boolean) => {
        const summary = await pass(db, at(30_000), 'sandbox', { full });
        expect(summary.mode).toBe(full ? 'full' : 'incremental');
      };
      const { incremental, full } = await bothWays(build, finish, dbIncr, dbFull);
      // Both resolve it: a listing proves the order exists, whatever became of the run.
      expect(incremental).toEqual(full);
    })();
  }));
});

describe('R_prev is the run the previous pass could use', () => {
  it('orphan_webhook: a complete run whose finished_at precedes the previous pass start but that the pass did not see', withDb(async (dbIncr) => {
    await withDb(async (dbFull) => {
      const order = randomUUID();
      const other = randomUUID();
      const build = async (db: TestDatabase) => {
        const p1 = await pollRun(db, at(0));
        await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: p1 });
        await snapshot(db, { order: other, state: 'confirmed', seenAt: at(0), runId: p1 });
        await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-5), receivedAt: at(-4) });
        await orderEvent(db, { order: other, state: 'confirmed', eventTime: eventTime(-5), receivedAt: at(-4) });
        // The pass at W = 3G sees only P1: nothing to find.
        await pass(db, at(3 * GRACE));
        expect(await openOrderFindings(db)).toEqual([]);
        // A complete run that committed after that pass read poll_runs, with finished_at (the
        // database's now()) a few seconds before W: the reconcile replica's clock runs ahead of the
        // database's (what SCOPE_MARGIN_SECONDS is there for elsewhere). It does not list `order`.
        const [p2] = await db.sql<{ id: string }[]>`
          insert into poll_runs (environment, started_at, finished_at, status)
          values ('sandbox', ${at(3 * GRACE - 100).toISOString()}::timestamptz, ${at(3 * GRACE - 5).toISOString()}::timestamptz, 'complete') returning id`;
        await snapshot(db, { order: other, state: 'confirmed', seenAt: at(3 * GRACE - 90), runId: Number(p2!.id) });
      };
      const finish = async (db: TestDatabase, full: boolean) => {
        const summary = await pass(db, at(3 * GRACE + 600), 'sandbox', { full });
        expect(summary.mode).toBe(full ? 'full' : 'incremental');
      };
      const { incremental, full } = await bothWays(build, finish, dbIncr, dbFull);
      expect(full).toEqual([{ kind: 'orphan_webhook', entity_id: order, status: 'open' }]);
      expect(incremental).toEqual(full);
    })();
  }));
});
