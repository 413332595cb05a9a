
import { bigint, bigserial, boolean, customType, index, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { providerEnvironment } from './common.js';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

export const parseStatus = pgEnum('webhook_parse_status', ['parsed', 'unknown_topic', 'invalid_shape']);

/**
 * Every delivery that was answered 2xx, exactly as received: the raw bytes (so the signature can be
 * re-checked later), the headers that matter and what the receiver made of it. Never updated.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryUuid: uuid('delivery_uuid').notNull(),
    environment: providerEnvironment('environment').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    sourceIp: text('source_ip'),
    headers: jsonb('headers').$type<Record<string, string>>().notNull(),
    rawBody: bytea('raw_body').notNull(),
    signatureValid: boolean('signature_valid').notNull(),
    /** Fingerprint (first 12 hex of sha256) of the secret that verified it, never the secret. */
    signatureKeyFingerprint: text('signature_key_fingerprint'),
    topic: text('topic'),
    parseStatus: parseStatus('parse_status').notNull(),
    parseError: text('parse_error'),
    /** Identity of the event the delivery carries; retries of one event share it. Null when unparsed. */
    eventKey: text('event_key'),
    entityType: text('entity_type'),
    entityId: text('entity_id'),
    /** event_time as sent, with every fractional digit. */
    eventTime: text('event_time'),
    /** event_time normalised to 9 fractional digits, so text order is time order. */
    eventTimeSortable: text('event_time_sortable'),
  },
  (t) => [
    index('webhook_deliveries_event_idx').on(t.environment, t.eventKey),
    index('webhook_deliveries_received_idx').on(t.environment, t.receivedAt),
  ],
);

/**
 * One row per distinct event: the first delivery to commit it wins (ON CONFLICT DO NOTHING), so
 * concurrent identical deliveries are applied once, decided by the database.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    environment: providerEnvironment('environment').notNull(),
    eventKey: text('event_key').notNull(),
    topic: text('topic').notNull(),
    entityType: text('entity_type').notNull(),
    entityId: text('entity_id').notNull(),
    eventTime: text('event_time'),
    eventTimeSortable: text('event_time_sortable'),
    firstDeliveryId: bigint('first_delivery_id', { mode: 'number' }).notNull(),
    firstReceivedAt: timestamp('first_received_at', { withTimezone: true, precision: 6 }).notNull(),
  },
  // Only the key is indexed: every insert into this table is on the webhook acknowledgement path,
  // and readers reach events by key (duplicate deliveries) or through the typed tables' indexes.
  (t) => [primaryKey({ columns: [t.environment, t.eventKey] })],
);

