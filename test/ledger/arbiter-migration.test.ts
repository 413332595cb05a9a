import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { classifyDelivery, type StorableClassification } from '../../src/webhooks/classify.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { applyMigrationFiles } from '../helpers/migrations.js';

/**
 * Migration 0014 leads the applied-once arbiter with the event's day. Claims written before it get
 * their day from the applied delivery, from the event's typed row where retention has dropped the
 * delivery, and '' for an event without a time; afterwards a retry of each is still a retry.
 */
let db: TestDatabase;
useTestDatabase('arbiter_migration', (d) => (db = d), { migrate: false });

const orderBody = (orderUuid: string, time: string) =>
  Buffer.from(JSON.stringify({ topic: 'order/confirmed', order_uuid: orderUuid, order_state: 'confirmed', external_reference_id: 'ORD-1', event_time: time,
    buyer: { uuid: '5b7c9d1e-2222-4333-8444-555566667777', name: 'Acme GmbH', legal_form: 'GmbH' }, net_term: 30 }));
const buyerBody = Buffer.from(JSON.stringify(samplePayload('buyer/accepted')));

function classified(body: Buffer): StorableClassification {
  const c = classifyDelivery(body) as StorableClassification;
  expect(c.status, c.error).toBe('parsed');
  return c;
}

it('existing claims keep deciding retries: day from the delivery, from the typed row once the delivery is gone, else empty', { timeout: 60_000 }, async () => {
  await applyMigrationFiles(db, (f) => f < '0014');
  const live = classified(orderBody('0c1d2e3f-1111-4222-8333-444455556666', '2026-10-05T08:00:00Z'));
  const retired = classified(orderBody('0c1d2e3f-9999-4222-8333-444455556666', '2025-01-31T23:59:59.5Z'));
  const timeless = classified(buyerBody);
  expect(timeless.event?.eventTime).toBeUndefined();

  // As the receiver stored them before 0014 (claims keyed on (environment, event_key)).
  for (const [c, receivedAt] of [[live, '2026-10-05T08:00:01Z'], [retired, '2025-02-01T00:00:01Z'], [timeless, '2026-10-05T09:00:00Z']] as const) {
    const e = c.event!;
    const [row] = await db.sql<{ id: string }[]>`
      insert into webhook_deliveries (delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic, parse_status,
                                      event_key, entity_type, entity_id, event_time, event_time_sortable, applied, parser_version)
      values (${randomUUID()}, 'sandbox', ${receivedAt}, '{}'::jsonb, ${Buffer.from('{}')}, true, ${c.topic}, 'parsed',
              ${e.key}, ${e.entityType}, ${e.entityId}, ${e.eventTime?.raw ?? null}, ${e.eventTime?.sortable ?? null}, true, 3)
      returning id`;
    await db.sql`insert into webhook_applied_events (environment, event_key, delivery_id, received_at) values ('sandbox', ${e.key}, ${row!.id}, ${receivedAt})`;
  }
  await db.sql`
    insert into order_events (environment, event_key, topic, received_at, order_uuid, order_state, external_reference_id, event_time, event_time_sortable)
    values ('sandbox', ${retired.event!.key}, 'order/confirmed', '2025-02-01T00:00:01Z', ${retired.event!.entityId}, 'confirmed', 'ORD-1',
            ${retired.event!.eventTime!.raw}, ${retired.event!.eventTime!.sortable})`;
  // Retention dropped the retired delivery's month; its claim outlives it.
  await db.sql`delete from webhook_deliveries where event_key = ${retired.event!.key}`;

  await applyMigrationFiles(db, (f) => f >= '0014');

  const days = await db.sql<{ event_key: string; event_day: string }[]>`select event_key, event_day from webhook_applied_events`;
  expect(Object.fromEntries(days.map((d) => [d.event_key, d.event_day]))).toEqual({
    [live.event!.key]: '2026-10-05',
    [retired.event!.key]: '2025-01-31',
    [timeless.event!.key]: '',
  });

  // Retries of all three, and one new event, through the receiver's statement.
  const delivery = (classification: StorableClassification) => ({
    deliveryUuid: randomUUID(), environment: 'sandbox' as const, receivedAt: new Date(), sourceIp: null, headers: {}, rawBody: Buffer.from('{}'), keyFingerprint: null, classification,
  });
  const fresh = classified(orderBody('0c1d2e3f-5555-4222-8333-444455556666', '2026-11-24T07:00:00Z'));
  const written = await writeDeliveries(db.sql, [live, retired, timeless, fresh].map(delivery));
  expect(written.map((w) => [w.applied, w.duplicate])).toEqual([[false, true], [false, true], [false, true], [true, false]]);
  const [claim] = await db.sql<{ event_day: string }[]>`select event_day from webhook_applied_events where event_key = ${fresh.event!.key}`;
  expect(claim!.event_day).toBe('2026-11-24');
});
