import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { upsertOrdersPages } from '../../src/poller/upsert.js';
import type { TestDatabase } from '../helpers/database.js';
import { GRACE, at, eventTime, orderEvent, pass, pollRun } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('missed_webhook_hash');

const finding = async (db: TestDatabase) =>
  (await db.sql<{ id: number; status: string; evidence_hash: string }[]>`
    select id::int, status::text, evidence_hash from discrepancies where kind = 'missed_webhook'`)[0]!;
const history = async (db: TestDatabase, id: number) =>
  db.sql<{ from_status: string | null; to_status: string; actor: string; reason: string }[]>`
    select from_status::text, to_status::text, actor, reason from discrepancy_history where discrepancy_id = ${id} order by id`;

describe('missed_webhook evidence_hash after a change back within one poll run (paging drift, upsert.ts A, B, A)', () => {
  it('an acknowledged finding stays acknowledged when the order merely moves on: the poller saw the state anew nowhere', withDb(async (db) => {
    const order = randomUUID();
    // One poll run reads the order three times as it pages (upsert.ts: "A change back to a state
    // already seen in this run (A, B, A) keeps the first observation"): confirmed, pending, confirmed.
    const run = await pollRun(db, at(0));
    const read = (state: string, t: Date) =>
      upsertOrdersPages(db.sql, 'sandbox', run, [{ orders: [{ uuid: order, state, external_reference_id: 'ORD-1' }], observedAt: t }]);
    await read('confirmed', at(0));
    await read('pending', at(10));
    await read('confirmed', at(20));
    // order/pending arrived; order/confirmed never did: one missed_webhook (confirmed).
    await orderEvent(db, { order, state: 'pending', eventTime: eventTime(5), receivedAt: at(6) });
    await pass(db, at(2 * GRACE));
    const opened = await finding(db);
    expect(opened.status).toBe('open');
    expect((await acknowledgeDiscrepancy(db, opened.id, 'provider lost it, ticket 77', 'anna')).outcome).toBe('acknowledged');

    // A later run sees the order shipped (a state with no topic). Nothing new about `confirmed`:
    // no new sighting of it, no webhook for it.
    const later = await pollRun(db, at(3 * GRACE));
    await upsertOrdersPages(db.sql, 'sandbox', later, [{ orders: [{ uuid: order, state: 'shipped', external_reference_id: 'ORD-1' }], observedAt: at(3 * GRACE) }]);
    await pass(db, at(4 * GRACE));

    // missed-webhook.ts: "an acknowledged finding reopens only when the poller saw S anew (A -> B -> A)";
    // lifecycle: reopened after an acknowledgement only if its evidence changes.
    const after = await finding(db);
    expect(after.evidence_hash).toBe(opened.evidence_hash);
    expect(after.status).toBe('acknowledged');
    expect((await history(db, opened.id)).map((h) => `${h.from_status}->${h.to_status}`)).toEqual(['null->open', 'open->acknowledged']);
  }));
});
