import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/database.js';
import { at, eventTime, orderEvent, pass, pollRun, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';

/**
 * scope.ts clause 6: an order listed by a poll run that did not complete is in an incremental pass's
 * scope when the run listed it since the previous pass began, less M + G (2 h here), whenever the
 * run began. A slow, rate-limited scan of a big merchant lists its last pages hours after its start;
 * counted from the start, such a listing (by a run that then failed) was judged by full passes only.
 */
const withDb = databasePerTest('incr_long_poll_run');

async function orderFindings(db: TestDatabase) {
  return [...await db.sql<{ kind: string; entity_id: string; status: string }[]>`
    select kind::text, entity_id, status::text from discrepancies where entity_type = 'order' order by kind, entity_id`];
}

/** An incremental pass at `now`, then a full one at the same instant on the same ledger: what each concluded. */
async function incrementalThenFull(db: TestDatabase, now: Date) {
  const incremental = await pass(db, now);
  expect(incremental.mode).toBe('incremental');
  const afterIncremental = await orderFindings(db);
  const full = await pass(db, now, 'sandbox', { full: true });
  expect(full.mode).toBe('full');
  return { afterIncremental, afterFull: await orderFindings(db) };
}

/** A poll run still running (no finish yet), begun at `startedAt`. */
async function runningPoll(db: TestDatabase, startedAt: Date): Promise<number> {
  const [row] = await db.sql<{ id: string }[]>`
    insert into poll_runs (environment, started_at, status) values ('sandbox', ${startedAt.toISOString()}::timestamptz, 'running') returning id`;
  return Number(row!.id);
}

async function endPoll(db: TestDatabase, id: number, finishedAt: Date, status: 'failed' | 'aborted'): Promise<void> {
  await db.sql`update poll_runs set status = ${status}, finished_at = ${finishedAt.toISOString()}::timestamptz where id = ${id}`;
}

describe('a poll run that lists an order long after it began, then fails', () => {
  it('state_mismatch: the listing after the latest webhook proves the mismatch in an incremental pass, as in a full one', withDb(async (db) => {
    const order = randomUUID();
    // P1 lists the order confirmed; the confirmed webhook came before it, order/canceled after it.
    const p1 = await pollRun(db, at(10));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(10), runId: p1 });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(0), receivedAt: at(1) });
    await orderEvent(db, { order, state: 'canceled', eventTime: eventTime(100), receivedAt: at(101) });
    // A slow poll run begins at 2,700 s (after order/canceled) and is still paging at the first pass.
    const q = await runningPoll(db, at(2700));
    const first = await pass(db, at(10_000));
    expect(first.mode).toBe('full');
    expect(await orderFindings(db)).toEqual([]); // no poll after order/canceled has listed it yet
    // The run reaches the order's page at 12,000 s (still confirmed), more than G + M after it
    // began and after W - M - G = 2,800 s, then fails on a later page.
    await snapshot(db, { order, state: 'confirmed', seenAt: at(12_000), runId: q });
    await endPoll(db, q, at(13_000), 'failed');

    const { afterIncremental, afterFull } = await incrementalThenFull(db, at(14_000));
    expect(afterFull).toEqual([{ kind: 'state_mismatch', entity_id: order, status: 'open' }]);
    expect(afterIncremental).toEqual(afterFull);
  }));

  it('orphan_webhook: the listing proves the order exists in an incremental pass, as in a full one', withDb(async (db) => {
    const order = randomUUID();
    const other = randomUUID();
    const p0 = await pollRun(db, at(-5000));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(-5000), runId: p0 });
    await snapshot(db, { order: other, state: 'confirmed', seenAt: at(-5000), runId: p0 });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-5000), receivedAt: at(-4999) });
    await orderEvent(db, { order: other, state: 'confirmed', eventTime: eventTime(-5000), receivedAt: at(-4999) });
    // Complete run P1, over a grace period after the order's webhook, does not list it: orphan.
    const p1 = await pollRun(db, at(10));
    await snapshot(db, { order: other, state: 'confirmed', seenAt: at(10), runId: p1 });
    const q = await runningPoll(db, at(2700));
    const first = await pass(db, at(10_000));
    expect(first.mode).toBe('full');
    expect(await orderFindings(db)).toEqual([{ kind: 'orphan_webhook', entity_id: order, status: 'open' }]);
    // The slow run lists the order at 12,000 s, then aborts.
    await snapshot(db, { order, state: 'confirmed', seenAt: at(12_000), runId: q });
    await endPoll(db, q, at(13_000), 'aborted');

    const { afterIncremental, afterFull } = await incrementalThenFull(db, at(14_000));
    expect(afterFull).toEqual([{ kind: 'orphan_webhook', entity_id: order, status: 'resolved' }]);
    expect(afterIncremental).toEqual(afterFull);
  }));

  it('scope: the orders a run not complete listed since W - M - G are in scope, whenever it began; those it listed before are not', withDb(async (db) => {
    const early = randomUUID();
    const late = randomUUID();
    // A complete run listed both orders long ago: their states and observations are old news.
    const p0 = await pollRun(db, at(-20_000));
    await snapshot(db, { order: early, state: 'confirmed', seenAt: at(-20_000), runId: p0 });
    await snapshot(db, { order: late, state: 'confirmed', seenAt: at(-20_000), runId: p0 });
    // A slow run begins at 0 s and lists `early` again at 100 s, in the same state.
    const q = await runningPoll(db, at(0));
    await snapshot(db, { order: early, state: 'confirmed', seenAt: at(100), runId: q });
    expect((await pass(db, at(200))).mode).toBe('full');
    // W = 200 s, W - M - G = -7,000 s: the listing at 100 s is in scope.
    expect(await pass(db, at(10_000))).toMatchObject({ mode: 'incremental', scopeOrders: 1 });
    // Still running, the run lists `late` at 10,050 s, in the same state (nothing but the listing is
    // new). W = 10,000 s, W - M - G = 2,800 s, after the run began: `late` is in scope, `early`'s
    // listing (100 s) was judged by the pass above and is not.
    await snapshot(db, { order: late, state: 'confirmed', seenAt: at(10_050), runId: q });
    expect(await pass(db, at(10_100))).toMatchObject({ mode: 'incremental', scopeOrders: 1 });
    // The run fails: its finish comes after its last listing, which stays in scope ...
    await endPoll(db, q, at(10_200), 'failed');
    expect(await pass(db, at(10_300))).toMatchObject({ mode: 'incremental', scopeOrders: 1 });
    expect(await pass(db, at(20_000))).toMatchObject({ mode: 'incremental', scopeOrders: 1 });
    // ... until a pass whose W - M - G (12,800 s) is after it.
    expect(await pass(db, at(20_100))).toMatchObject({ mode: 'incremental', scopeOrders: 0 });
  }));
});
