import type { Sql, TransactionSql } from 'postgres';
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

type Cell = string | number | null;

/** Column-wise arrays: one array per column, in the order of the unnest below. */
function deliveryColumns(records: readonly DeliveryRecord[]): Cell[][] {
  const columns: Cell[][] = Array.from({ length: 15 }, () => []);
  for (const r of records) {
    const c = r.classification;
    const e = c.event;
    const values: Cell[] = [
      r.deliveryUuid,
      r.environment,
      // drizzle sets postgres.js's timestamp and json serializers to identity on the shared client,
      // so raw statements pass text (ISO time, JSON) and the server casts it.
      r.receivedAt.toISOString(),
      r.sourceIp,
      JSON.stringify(r.headers),
      // Hex keeps every byte (NUL and invalid UTF-8 included) through a text[] parameter.
      r.rawBody.toString('hex'),
      r.keyFingerprint,
      c.topic,
      c.status,
      c.error ?? null,
      e?.key ?? null,
      e?.entityType ?? null,
      e?.entityId ?? null,
      e?.eventTime?.raw ?? null,
      e?.eventTime?.sortable ?? null,
    ];
    values.forEach((value, i) => (columns[i] as Cell[]).push(value));
  }
  return columns;
}

function typedCell(value: unknown, type: string): Cell {
  if (value === null || value === undefined) return null;
  if (type === 'jsonb' || type === 'text_list') return JSON.stringify(value);
  return value as Cell;
}

function insertTyped(tx: TransactionSql, table: TypedTable, records: readonly DeliveryRecord[]) {
  const spec = TYPED_COLUMNS[table] as Record<string, string>;
  const names = Object.keys(spec);
  const base: Cell[][] = [[], [], [], []];
  const columns: Cell[][] = names.map(() => []);
  for (const r of records) {
    const e = r.classification.event;
    if (!e || e.typed.table !== table) continue;
    base[0]?.push(r.environment);
    base[1]?.push(e.key);
    base[2]?.push(r.classification.topic);
    base[3]?.push(r.receivedAt.toISOString());
    names.forEach((name, i) => columns[i]?.push(typedCell(e.typed.values[name], spec[name] as string)));
  }
  // A list column travels as JSON text and is unpacked per row: unnest would flatten a 2-D array.
  const select = names.map((name, i) =>
    spec[name] === 'text_list' ? `array(select jsonb_array_elements_text(c${i}::jsonb))` : `c${i}::${spec[name] as string}`,
  );
  const unnestArgs = names.map((_, i) => `$${i + 5}::text[]`);
  const statement = `
    insert into ${table} (environment, event_key, topic, received_at, ${names.join(', ')})
    select env::provider_environment, key, topic, received_at::timestamptz, ${select.join(', ')}
    from unnest($1::text[], $2::text[], $3::text[], $4::text[], ${unnestArgs.join(', ')})
      as u(env, key, topic, received_at, ${names.map((_, i) => `c${i}`).join(', ')})
    on conflict do nothing`;
  return tx.unsafe(statement, [...base, ...columns] as never[], { prepare: true });
}

/**
 * Commits a batch of deliveries in one transaction, its statements pipelined:
 * 1. one statement inserts the deliveries and, for each event key, offers the batch's first
 *    delivery as the event (ON CONFLICT DO NOTHING on (environment, event_key)). A concurrent
 *    transaction offering the same key makes this one wait for its commit and then lose, so of
 *    200 simultaneous retries exactly one is applied: the database decides, not process memory.
 * 2. the typed rows, also ON CONFLICT DO NOTHING on (environment, event_key), so only the winner's
 *    row lands (the loser's conflicts with the committed one).
 * Every statement takes one array per column, so its text (and plan) is the same for any batch size.
 * Nothing is acknowledged before this function's commit resolves.
 */
export async function writeDeliveries(sql: Sql, records: readonly DeliveryRecord[]): Promise<WriteResult[]> {
  const columns = deliveryColumns(records);
  const col = (i: number) => columns[i] as string[];
  const tables = new Set<TypedTable>();
  for (const r of records) if (r.classification.event) tables.add(r.classification.event.typed.table);

  const [outcome] = await sql.begin((tx) => [
    tx<{ delivery_uuid: string; id: string; applied: boolean; seen_before: boolean }[]>`
      with input as (
        select * from unnest(
          ${col(0)}::text[], ${col(1)}::text[], ${col(2)}::text[], ${col(3)}::text[], ${col(4)}::text[],
          ${col(5)}::text[], ${col(6)}::text[], ${col(7)}::text[], ${col(8)}::text[], ${col(9)}::text[],
          ${col(10)}::text[], ${col(11)}::text[], ${col(12)}::text[], ${col(13)}::text[], ${col(14)}::text[]
        ) with ordinality as u(delivery_uuid, environment, received_at, source_ip, headers, raw_hex, fingerprint,
                               topic, parse_status, parse_error, event_key, entity_type, entity_id, event_time, event_time_sortable, n)
      ), d as (
        insert into webhook_deliveries (delivery_uuid, environment, received_at, source_ip, headers, raw_body, signature_valid,
          signature_key_fingerprint, topic, parse_status, parse_error, event_key, entity_type, entity_id, event_time, event_time_sortable)
        select delivery_uuid::uuid, environment::provider_environment, received_at::timestamptz, source_ip, headers::jsonb,
          decode(raw_hex, 'hex'), true, fingerprint, topic, parse_status::webhook_parse_status, parse_error, event_key, entity_type, entity_id, event_time, event_time_sortable
        from input order by n
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
    ...[...tables].map((table) => insertTyped(tx, table, records)),
  ]);

  const byUuid = new Map((outcome as unknown as { delivery_uuid: string; id: string; applied: boolean; seen_before: boolean }[]).map((row) => [row.delivery_uuid, row]));
  return records.map((record) => {
    const row = byUuid.get(record.deliveryUuid);
    if (!row) throw new Error(`delivery ${record.deliveryUuid} missing from the commit result`);
    return { deliveryId: Number(row.id), applied: row.applied, duplicate: row.seen_before };
  });
}
