import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GRACE, at, discrepancies, eventTime, orderEvent, pass, pollRun, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('rec_dup_event_returns');

describe('duplicate_event (orders): a state the order legitimately returns to', () => {
  it('does not call confirmed -> pending -> confirmed a duplicate: each confirmed is a different change', withDb(async (db) => {
    const order = randomUUID();
    // The order was confirmed, sent to manual review, and confirmed again: three changes, three webhooks.
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-300), receivedAt: at(-299) });
    await orderEvent(db, { order, state: 'pending', eventTime: eventTime(-200), receivedAt: at(-199) });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-100), receivedAt: at(-99) });
    // The poller saw every one of those states (the code itself records A -> B -> A observations).
    const r1 = await pollRun(db, at(-250));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(-250), runId: r1 });
    const r2 = await pollRun(db, at(-150));
    await snapshot(db, { order, state: 'pending', seenAt: at(-150), runId: r2 });
    const r3 = await pollRun(db, at(-50));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(-50), runId: r3 });
    await pass(db, at(2 * GRACE));
    expect(await discrepancies(db, 'duplicate_event')).toEqual([]);
  }));

  it('still calls two confirmed events next to each other a duplicate, listing those two alone', withDb(async (db) => {
    const order = randomUUID();
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-400), receivedAt: at(-399) });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-350), receivedAt: at(-349) });
    await orderEvent(db, { order, state: 'pending', eventTime: eventTime(-200), receivedAt: at(-199) });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-100), receivedAt: at(-99) });
    await pass(db, at(2 * GRACE));
    const found = await discrepancies(db, 'duplicate_event');
    expect(found).toMatchObject([{ entity_id: order, subject: 'confirmed', observed: '2', status: 'open' }]);
  }));
});
