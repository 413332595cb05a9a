import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GRACE, at, discrepancies, eventTime, orderEvent, pass, pollRun, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('orphan_webhook');

describe('orphan_webhook', () => {
  it('needs a complete poll that started a grace period after the delivery and did not list the order', withDb(async (db) => {
    const orphan = randomUUID();
    await orderEvent(db, { order: orphan, state: 'confirmed', eventTime: eventTime(-1), receivedAt: at(0), externalReferenceId: 'ext-9' });
    // Near misses: a complete run that began inside the grace period (the order may have been
    // created while it was scanning), and a failed run after it (proves nothing).
    await pollRun(db, at(GRACE - 10), 'complete');
    await pollRun(db, at(GRACE + 10), 'failed');
    await pass(db, at(GRACE + 100));
    expect(await discrepancies(db, 'orphan_webhook')).toEqual([]);

    await pollRun(db, at(GRACE + 200), 'complete');
    await pass(db, at(GRACE + 300));
    const [row] = await db.sql<{ external_reference_id: string; expected: string; observed: string }[]>`
      select external_reference_id, expected, observed from discrepancies where kind = 'orphan_webhook' and entity_id = ${orphan}`;
    expect(row).toEqual({ external_reference_id: 'ext-9', expected: 'listed', observed: 'absent' });
  }));

  it('resolves when a later complete poll lists the order', withDb(async (db) => {
    const order = randomUUID();
    await orderEvent(db, { order, state: 'authorized', eventTime: eventTime(-1), receivedAt: at(0) });
    await pollRun(db, at(GRACE + 1));
    await pass(db, at(GRACE + 100));
    expect(await discrepancies(db, 'orphan_webhook')).toMatchObject([{ status: 'open', entity_id: order }]);
    // Acknowledged or open, a later listing clears it.
    const later = await pollRun(db, at(GRACE + 400));
    await snapshot(db, { order, state: 'authorized', seenAt: at(GRACE + 400), runId: later });
    await pass(db, at(GRACE + 500));
    expect(await discrepancies(db, 'orphan_webhook')).toMatchObject([{ status: 'resolved', entity_id: order }]);
    const [h] = await db.sql<{ reason: string }[]>`select reason from discrepancy_history where to_status = 'resolved'`;
    expect(h?.reason).toBe('a poll listed the order');
  }));

  it('is not fooled by an order the run did list', withDb(async (db) => {
    const listed = randomUUID();
    await orderEvent(db, { order: listed, state: 'authorized', eventTime: eventTime(-1), receivedAt: at(0) });
    const run = await pollRun(db, at(GRACE + 1));
    await snapshot(db, { order: listed, state: 'authorized', seenAt: at(GRACE + 2), runId: run });
    await pass(db, at(GRACE + 100));
    expect(await discrepancies(db)).toEqual([]);
  }));
});
