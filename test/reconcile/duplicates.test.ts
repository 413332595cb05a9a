import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GRACE, at, discrepancies, eventTime, orderEvent, pass, pollRun, retryOf, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';
import type { TestDatabase } from '../helpers/database.js';

const withDb = databasePerTest('duplicates');

async function payoutEvent(db: TestDatabase, payout: string, sepa: string, status: string, key: string): Promise<void> {
  await db.sql`
    insert into payout_events (environment, event_key, topic, received_at, payout_uuid, status, sepa_instruction_id, amount_cents,
                               external_reference_ids, event_time, event_time_sortable)
    values ('sandbox', ${key}, ${'payout/' + status}, now(), ${payout}, ${status}, ${sepa}, 12345, '{INV-1}', null, null)`;
}

describe('duplicate_event and duplicate_delivery', () => {
  it('flags two distinct events for one change, but not retries of one event', withDb(async (db) => {
    const order = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: run });
    const first = await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9), externalReferenceId: 'ext-d' });
    // Near miss: two retries of the same event share its event_key: duplicate deliveries only.
    await retryOf(db, first.eventKey, at(-5));
    await retryOf(db, first.eventKey, at(60));
    await pass(db, at(GRACE + 100));
    expect(await discrepancies(db, 'duplicate_event')).toEqual([]);
    const deliveries = await db.sql<{ status: string; resolved_at: Date | null; expected: string; external_reference_id: string }[]>`
      select status::text, resolved_at, expected, external_reference_id from discrepancies where kind = 'duplicate_delivery'`;
    expect(deliveries).toHaveLength(2);
    for (const d of deliveries) {
      expect(d.status).toBe('resolved');
      expect(d.resolved_at).not.toBeNull();
      expect(d.expected).toBe(String(first.deliveryId));
      expect(d.external_reference_id).toBe('ext-d');
    }
    const [history] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from discrepancy_history where from_status is null and to_status = 'resolved'`;
    expect(history?.n).toBe(2);

    // A second confirmed event with another event_time is a distinct claim of the same change.
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-3), receivedAt: at(-2) });
    const summary = await pass(db, at(GRACE + 200));
    expect(summary.duplicateDeliveries).toBe(0);
    expect(await discrepancies(db, 'duplicate_event')).toMatchObject([
      { status: 'open', entity_type: 'order', entity_id: order, subject: 'confirmed', observed: '2' },
    ]);
  }));

  it('flags two payouts sharing one SEPA reference, and one payout reported twice', withDb(async (db) => {
    const a = randomUUID();
    const b = randomUUID();
    const c = randomUUID();
    await payoutEvent(db, a, 'SEPA-1', 'complete', 'k1');
    await payoutEvent(db, b, 'SEPA-1', 'complete', 'k2');
    await payoutEvent(db, c, 'SEPA-2', 'complete', 'k3');
    await payoutEvent(db, c, 'SEPA-2', 'complete', 'k4');
    // Near miss: one payout completing then cancelled is two changes, not a duplicate.
    await payoutEvent(db, a, 'SEPA-1', 'cancelled', 'k5');
    await pass(db, at(0));
    const rows = await db.sql<{ entity_type: string; entity_id: string; subject: string; sepa_reference: string }[]>`
      select entity_type::text, entity_id, subject, sepa_reference from discrepancies where kind = 'duplicate_event' order by subject`;
    expect(rows).toEqual([
      // b reported SEPA-1 after a: b is the claim to check.
      { entity_type: 'payout', entity_id: b, subject: 'SEPA-1', sepa_reference: 'SEPA-1' },
      { entity_type: 'payout', entity_id: c, subject: 'status:complete', sepa_reference: 'SEPA-2' },
    ]);
  }));
});
