import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { upsertOrdersPages } from '../../src/poller/upsert.js';
import { streamDiscrepancies } from '../../src/reports/discrepancies.js';
import type { TestDatabase } from '../helpers/database.js';
import { GRACE, at, eventTime, orderEvent, pass, pollRun } from '../reconcile/fixtures.js';
import { databasePerTest } from '../reconcile/helpers.js';

const withDb = databasePerTest('rv_lifecycle');

/** What the real poller writes when run `runId` lists the order in `state` at `seenAt`. */
async function polled(db: TestDatabase, order: string, state: string, seenAt: Date): Promise<void> {
  const runId = await pollRun(db, seenAt);
  await upsertOrdersPages(db.sql, 'sandbox', runId, [{ orders: [{ uuid: order, state, external_reference_id: 'ORD-1' }], observedAt: seenAt }]);
}

const finding = async (db: TestDatabase, kind: string, order: string) =>
  (await db.sql<{ id: number; status: string }[]>`
    select id::int, status::text from discrepancies where kind = ${kind} and entity_id = ${order}`)[0]!;

async function report(db: TestDatabase, status: 'open' | 'acknowledged' | 'all'): Promise<Record<string, unknown>[]> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await streamDiscrepancies(db, { status }, 'json', out);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>[];
}

describe('missed_webhook: an acknowledgement and a state the poller sees anew', () => {
  it('reopens when the poller sees the state anew (A -> B -> A), as the rule header promises', withDb(async (db) => {
    const order = randomUUID();
    // The poller sees the order confirmed; no order/confirmed webhook ever arrives.
    await polled(db, order, 'confirmed', at(0));
    await pass(db, at(2 * GRACE));
    const missed = await finding(db, 'missed_webhook', order);
    expect(missed.status).toBe('open');
    expect((await acknowledgeDiscrepancy(db, missed.id, 'provider lost the first confirmation', 'anna')).outcome).toBe('acknowledged');

    // The order is canceled (its webhook arrives), and later the poller sees it confirmed again:
    // the poller saw confirmed anew, and again no order/confirmed webhook came.
    await orderEvent(db, { order, state: 'canceled', eventTime: eventTime(3 * GRACE - 10), receivedAt: at(3 * GRACE - 5) });
    await polled(db, order, 'canceled', at(3 * GRACE));
    await polled(db, order, 'confirmed', at(5 * GRACE));
    await pass(db, at(7 * GRACE), 'sandbox', { full: true });

    // rules/missed-webhook.ts: "The evidence hash covers S and `since`: an acknowledged finding
    // reopens only if the poller saw S anew (A -> B -> A)."
    expect((await finding(db, 'missed_webhook', order)).status).toBe('open');
  }));
});

describe('a reopened acknowledgement in the report', () => {
  it('an open row does not carry the acknowledgement its evidence change voided', withDb(async (db) => {
    const order = randomUUID();
    const run = await pollRun(db, at(0));
    await upsertOrdersPages(db.sql, 'sandbox', run, [{ orders: [{ uuid: order, state: 'confirmed', external_reference_id: 'ORD-1' }], observedAt: at(0) }]);
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-20), receivedAt: at(-19) });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9) });
    await pass(db, at(60));
    const dup = await finding(db, 'duplicate_event', order);
    expect((await acknowledgeDiscrepancy(db, dup.id, 'two confirmations, harmless', 'anna')).outcome).toBe('acknowledged');
    // A third order/confirmed: new evidence, so the finding is open again for a person to look at.
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(30), receivedAt: at(31) });
    await pass(db, at(120));
    const rows = await report(db, 'open');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'open', acknowledged_by: null, acknowledged_at: null, ack_note: null });
  }));
});
