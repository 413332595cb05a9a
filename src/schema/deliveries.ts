
import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, customType, index, integer, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { providerEnvironment } from './common.js';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

export const parseStatus = pgEnum('webhook_parse_status', ['parsed', 'unknown_topic', 'invalid_shape']);

/**
 * Every delivery that was answered 2xx, exactly as received: the raw bytes (so the signature can be
 * re-checked later), the headers that matter and what the receiver made of it. The raw bytes and
 * headers are never updated; what was made of them (topic through applied, parser_version) is
 * re-derived by `ledger reparse` (src/reparse) when a newer parser understands more.
 *
 * Partitioned by month of received_at (Postgres range partitioning, which drizzle cannot express:
 * migrations/0012_partition_deliveries.sql made it, src/ledger/partitions.ts keeps partitions ahead
 * and retires old ones). A unique index of a partitioned table must hold the partition key, so the
 * primary key is (id, received_at) and the applied-once decision lives in webhook_applied_events.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).notNull(),
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
    /**
     * This delivery carried its event first: the one applied (its typed row is in the ledger).
     * Every other delivery with the same event_key is a retry, stored and not applied again.
     */
    applied: boolean('applied').notNull().default(false),
    /**
     * PARSER_VERSION (webhooks/parser-version.ts) of the classifier that made the parsed fields
     * above; 0 for deliveries stored before versions were recorded.
     */
    parserVersion: integer('parser_version').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.receivedAt] }),
    index('webhook_deliveries_received_idx').on(t.environment, t.receivedAt),
    // Retries only: about 1 % of deliveries, so this index costs almost nothing on the ingest path.
    // Keyed by event: an event's retries are found by key; the reconciler's scan of recent retries
    // reads the whole (small) index.
    index('webhook_deliveries_retry_idx')
      .on(t.environment, t.eventKey)
      .where(sql`${t.eventKey} is not null and not ${t.applied}`),
    // Unparsed deliveries only (a provider change, or a bug): reparse walks them by id and the
    // deliveries report groups them, without reading the parsed majority.
    index('webhook_deliveries_unparsed_idx')
      .on(t.environment, t.id)
      .where(sql`${t.parseStatus} <> 'parsed'`),
  ],
);

/**
 * The event itself: one row per (environment, event_key) naming its applied delivery, the arbiter
 * of INSERT ... ON CONFLICT DO NOTHING, so of concurrent retries exactly one is applied, decided by
 * the database across every partition of webhook_deliveries (a unique index there could only be
 * unique per month). delivery_id and received_at are the applied delivery's primary key; the row
 * outlives the delivery when retention drops its month, so a very late retry is still a retry.
 *
 * The key leads with event_day, the day of the event's own time (the SQL function
 * webhook_event_day(event_time_sortable), migration 0014; '' for events without one): the event
 * key is a SHA-256, so keyed on it alone every claim lands on a random leaf of an index that grows
 * by a year's events (1.8 GB at 20,000,000), and with 128 MB of shared buffers each insert reads
 * and dirties a leaf that is not cached: 32-row claims ran at 653/s into that index against 1,831/s
 * into one of 800,000 keys (pgbench, 8 clients). Led by the day, today's claims share a few
 * leaves. Uniqueness is unchanged: the key hashes event_time_sortable (webhooks/classify.ts), so
 * every delivery of one key has the same day.
 */
export const webhookAppliedEvents = pgTable(
  'webhook_applied_events',
  {
    environment: providerEnvironment('environment').notNull(),
    eventDay: text('event_day').notNull(),
    eventKey: text('event_key').notNull(),
    deliveryId: bigint('delivery_id', { mode: 'number' }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, precision: 6 }).notNull(),
  },
  (t) => [primaryKey({ name: 'webhook_applied_events_pk', columns: [t.environment, t.eventDay, t.eventKey] })],
);

/**
 * One row per `ledger reparse` run (command or the daemon's automatic one): started `running`,
 * finished `complete`, `failed` or `aborted` (jobs/runs.ts), with what it did. Dry runs write none.
 */
export const reparseRuns = pgTable('reparse_runs', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  environment: providerEnvironment('environment').notNull(),
  startedAt: timestamp('started_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  finishedAt: timestamp('finished_at', { withTimezone: true, precision: 6 }),
  status: text('status').notNull().default('running'),
  /** 'command' or 'automatic' (the daemon after an upgrade). */
  trigger: text('trigger').notNull(),
  /** unknown_topic, invalid_shape, unparsed or all. */
  statusFilter: text('status_filter').notNull(),
  since: timestamp('since', { withTimezone: true, precision: 6 }),
  parserVersion: integer('parser_version').notNull(),
  examined: integer('examined').notNull().default(0),
  /** Totals by outcome (reparse/outcome.ts), and changes per topic and status. */
  outcomes: jsonb('outcomes'),
  changes: jsonb('changes'),
  error: text('error'),
});
