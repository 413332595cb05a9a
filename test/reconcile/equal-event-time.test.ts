import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseEventTime } from '../../src/webhooks/event-time.js';
import { GRACE, at, discrepancies, eventTime, orderEvent, pass, pollRun, snapshot } from '../reconcile/fixtures.js';
import { databasePerTest } from '../reconcile/helpers.js';

const withDb = databasePerTest('rv_equal_event_time');

const key = (state: string, order: string, time: string) =>
  createHash('sha256').update(`order/${state}\n${order}\n${parseEventTime(time)!.sortable}`).digest('hex');

/** An order uuid for which the order/authorized event key sorts above (or below) the order/confirmed one at `time`. */
function orderWhereAuthorizedKey(above: boolean, time: string): string {
  for (;;) {
    const order = randomUUID();
    if ((key('authorized', order, time) > key('confirmed', order, time)) === above) return order;
  }
}

describe('state_mismatch with two events of one event_time', () => {
  it('is not decided by which sha256 event key happens to be larger', withDb(async (db) => {
    // Two orders with identical facts: order/authorized and order/confirmed carry the same
    // event_time (nothing in the stream says which came last), the API says confirmed, a
    // confirmed webhook exists. Nothing contradicts the API; the only difference between the two
    // orders is the hash of their event keys.
    const time = eventTime(-10, 500_000_000);
    const unlucky = orderWhereAuthorizedKey(true, time);
    const lucky = orderWhereAuthorizedKey(false, time);
    const run = await pollRun(db, at(0));
    for (const order of [unlucky, lucky]) {
      await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: run });
      await orderEvent(db, { order, state: 'authorized', eventTime: time, receivedAt: at(-9) });
      await orderEvent(db, { order, state: 'confirmed', eventTime: time, receivedAt: at(-9) });
    }
    await pass(db, at(2 * GRACE));
    const found = (await discrepancies(db, 'state_mismatch')).map((d) => ({ entity_id: d.entity_id, expected: d.expected, observed: d.observed }));
    // Same facts, same verdict: and since no event is "latest", no proven mismatch.
    expect(found).toEqual([]);
  }));
});
