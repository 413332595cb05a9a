import type { Sql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Classification } from './classify.js';
import { TYPED_COLUMNS, type TypedTable } from './typed-rows.js';

/** A verified delivery, ready for the ledger. */
export interface DeliveryRecord {
  deliveryUuid: string;
  environment: ProviderEnvironment;
  receivedAt: Date;
  sourceIp: string | null;
  headers: Record<string, string>;
  rawBody: Buffer;
  keyFingerprint: string | null;
  classification: Extract<Classification, { ok: true }>;
}

export interface WriteResult {
  deliveryId: number;
  /** This delivery's event was new: its typed row is now in the ledger. */
  applied: boolean;
  /** Another delivery of the same event was stored before (a retry). */
  duplicate: boolean;
}

/** Objects bound for jsonb columns go as JSON text (see the note on received_at). */
function jsonAsText(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value !== null && typeof value === 'object' && !Array.isArray(value) ? JSON.stringify(value) : value;
  }
  return out;
}

const DELIVERY_COLUMNS = [
  'delivery_uuid',
  'environment',
  'received_at',
  'source_ip',
  'headers',
  'raw_body',
  'signature_valid',
  'signature_key_fingerprint',
  'topic',
  'parse_status',
  'parse_error',
  'event_key',
  'entity_type',
  'entity_id',
  'event_time',
  'event_time_sortable',
] as const;

function deliveryRow(record: DeliveryRecord): Record<(typeof DELIVERY_COLUMNS)[number], unknown> {
  const { classification: c } = record;
  return {
    delivery_uuid: record.deliveryUuid,
    environment: record.environment,
    // drizzle sets postgres.js's timestamp and json serializers to identity on the shared client,
    // so raw statements pass text (ISO time, JSON) and the server casts it.
    received_at: record.receivedAt.toISOString(),
    source_ip: record.sourceIp,
    headers: JSON.stringify(record.headers),
    raw_body: record.rawBody,
    signature_valid: true,
    signature_key_fingerprint: record.keyFingerprint,
    topic: c.topic,
    parse_status: c.status,
    parse_error: c.error ?? null,
    event_key: c.event?.key ?? null,
    entity_type: c.event?.entityType ?? null,
    entity_id: c.event?.entityId ?? null,
    event_time: c.event?.eventTime?.raw ?? null,
    event_time_sortable: c.event?.eventTime?.sortable ?? null,
  };
}

/**
 * Commits a batch of deliveries in one transaction of two pipelined round trips:
 * 1. one statement inserts the deliveries and, for each event key, offers the batch's first
 *    delivery as the event (ON CONFLICT DO NOTHING on (environment, event_key)). A concurrent
 *    transaction offering the same key makes this one wait for its commit and then lose, so of
 *    200 simultaneous retries exactly one is applied: the database decides, not process memory.
 * 2. the typed rows, also ON CONFLICT DO NOTHING on (environment, event_key), so only the winner's
 *    row lands (the loser's conflicts with the committed one).
 * Nothing is acknowledged before this function's commit resolves.
 */
export async function writeDeliveries(sql: Sql, records: readonly DeliveryRecord[]): Promise<WriteResult[]> {
  const deliveryRows = records.map(deliveryRow);
  const typed = new Map<TypedTable, Record<string, unknown>[]>();
  for (const record of records) {
    const event = record.classification.event;
    if (!event) continue;
    const list = typed.get(event.typed.table) ?? [];
    list.push({ environment: record.environment, event_key: event.key, topic: record.classification.topic, received_at: record.receivedAt.toISOString(), ...jsonAsText(event.typed.values) });
    typed.set(event.typed.table, list);
  }

  const [outcome] = await sql.begin((tx) => {
    const statements = [
      tx<{ delivery_uuid: string; id: string; applied: boolean; seen_before: boolean }[]>`
        with d as (
          insert into webhook_deliveries ${tx(deliveryRows as Record<string, never>[], ...DELIVERY_COLUMNS)}
          returning id, delivery_uuid, environment, received_at, topic, event_key, entity_type, entity_id, event_time, event_time_sortable
        ), candidates as (
          select distinct on (environment, event_key) *
          from d where event_key is not null
          order by environment, event_key, id
        ), e as (
          insert into webhook_events (environment, event_key, topic, entity_type, entity_id, event_time, event_time_sortable, first_delivery_id, first_received_at)
          select environment, event_key, topic, entity_type, entity_id, event_time, event_time_sortable, id, received_at from candidates
          on conflict (environment, event_key) do nothing
          returning first_delivery_id
        )
        select d.delivery_uuid, d.id::text as id, e.first_delivery_id is not null as applied,
               d.event_key is not null and e.first_delivery_id is null as seen_before
        from d left join e on e.first_delivery_id = d.id`,
    ];
    for (const [table, rows] of typed) {
      const columns = ['environment', 'event_key', 'topic', 'received_at', ...TYPED_COLUMNS[table]];
      statements.push(tx`insert into ${tx(table)} ${tx(rows as Record<string, never>[], columns)} on conflict do nothing` as never);
    }
    return statements;
  });

  const byUuid = new Map((outcome as unknown as { delivery_uuid: string; id: string; applied: boolean; seen_before: boolean }[]).map((row) => [row.delivery_uuid, row]));
  return records.map((record) => {
    const row = byUuid.get(record.deliveryUuid);
    if (!row) throw new Error(`delivery ${record.deliveryUuid} missing from the commit result`);
    return { deliveryId: Number(row.id), applied: row.applied, duplicate: row.seen_before };
  });
}
