import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GRACE, at, discrepancies, eventTime, orderEvent, pass, pollRun, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('state_mismatch');

describe('state_mismatch', () => {
  it('fires when the latest webhook contradicts an API state the webhooks also reported', withDb(async (db) => {
    const order = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: run });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-20), receivedAt: at(-19) });
    await orderEvent(db, { order, state: 'declined', eventTime: eventTime(-10), receivedAt: at(-9) });
    // Near miss: inside the grace period the poller may not have caught up yet.
    await pass(db, at(GRACE - 60));
    expect(await discrepancies(db)).toEqual([]);
    await pass(db, at(GRACE + 60));
    expect(await discrepancies(db)).toMatchObject([
      { kind: 'state_mismatch', status: 'open', entity_id: order, subject: '', expected: 'confirmed', observed: 'declined' },
    ]);
  }));

  it('orders by event_time, not arrival: an event reordered behind a later one is no mismatch', withDb(async (db) => {
    const order = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: run });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9) });
    // authorized happened first but arrived last (a retry after a timeout).
    await orderEvent(db, { order, state: 'authorized', eventTime: eventTime(-20), receivedAt: at(-1) });
    await pass(db, at(2 * GRACE));
    expect(await discrepancies(db)).toEqual([]);
  }));

  it('uses all nine fractional digits: two events inside one microsecond', withDb(async (db) => {
    const agree = randomUUID();
    const disagree = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order: agree, state: 'confirmed', seenAt: at(0), runId: run });
    await snapshot(db, { order: disagree, state: 'confirmed', seenAt: at(0), runId: run });
    // Same microsecond (…123456xxx); truncated to µs they tie and arrival order would decide.
    await orderEvent(db, { order: agree, state: 'confirmed', eventTime: eventTime(-10, 123_456_002), receivedAt: at(-9) });
    await orderEvent(db, { order: agree, state: 'authorized', eventTime: eventTime(-10, 123_456_001), receivedAt: at(-8) });
    await orderEvent(db, { order: disagree, state: 'declined', eventTime: eventTime(-10, 123_456_002), receivedAt: at(-9) });
    await orderEvent(db, { order: disagree, state: 'confirmed', eventTime: eventTime(-10, 123_456_001), receivedAt: at(-8) });
    await pass(db, at(2 * GRACE));
    expect(await discrepancies(db)).toMatchObject([{ kind: 'state_mismatch', entity_id: disagree, observed: 'declined' }]);
  }));

  it('says nothing for a no-topic API state, and leaves a missing webhook to missed_webhook', withDb(async (db) => {
    const shipped = randomUUID();
    const missing = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order: shipped, state: 'shipped', seenAt: at(0), runId: run });
    await orderEvent(db, { order: shipped, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9) });
    await snapshot(db, { order: missing, state: 'confirmed', seenAt: at(0), runId: run });
    await orderEvent(db, { order: missing, state: 'authorized', eventTime: eventTime(-10), receivedAt: at(-9) });
    await pass(db, at(2 * GRACE));
    expect(await discrepancies(db)).toMatchObject([{ kind: 'missed_webhook', entity_id: missing, subject: 'confirmed' }]);
  }));

  it('resolves when the API moves on to the state the webhooks reported', withDb(async (db) => {
    const order = randomUUID();
    const r1 = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'authorized', seenAt: at(0), runId: r1 });
    await orderEvent(db, { order, state: 'authorized', eventTime: eventTime(-20), receivedAt: at(-19) });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9) });
    await pass(db, at(2 * GRACE));
    expect(await discrepancies(db, 'state_mismatch')).toHaveLength(1);
    const r2 = await pollRun(db, at(2 * GRACE + 10));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(2 * GRACE + 10), runId: r2 });
    const summary = await pass(db, at(2 * GRACE + 100));
    expect(summary.resolved).toBe(1);
    expect(await discrepancies(db)).toMatchObject([{ kind: 'state_mismatch', status: 'resolved' }]);
  }));

  it('judges a webhook only against a poll that began after it: an API outage after a newer webhook is no mismatch', withDb(async (db) => {
    const order = randomUUID();
    // The poll sees confirmed; then the merchant cancels: order/canceled arrives after that poll.
    const r1 = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: r1 });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-20), receivedAt: at(-19) });
    await orderEvent(db, { order, state: 'canceled', eventTime: eventTime(5), receivedAt: at(10) });
    // No poll since (the API is down): long past the grace period, the old poll proves nothing.
    await pass(db, at(3 * GRACE));
    expect(await discrepancies(db, 'state_mismatch')).toEqual([]);
    // A poll begun after the webhook that still says confirmed does contradict it.
    const r2 = await pollRun(db, at(3 * GRACE + 10));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(3 * GRACE + 10), runId: r2 });
    await pass(db, at(3 * GRACE + 100));
    expect(await discrepancies(db, 'state_mismatch')).toMatchObject([{ status: 'open', expected: 'confirmed', observed: 'canceled' }]);
  }));
});
