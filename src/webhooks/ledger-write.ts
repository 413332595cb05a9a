import type { Sql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { StorableClassification } from './classify.js';
import { PARSER_VERSION } from './parser-version.js';
import { EVENT_COLUMNS, TYPED_COLUMNS, TYPED_TABLES, type TypedTable } from './typed-rows.js';

/** A verified delivery, ready for the ledger. */
export interface DeliveryRecord {
  deliveryUuid: string;
  environment: ProviderEnvironment;
  receivedAt: Date;
  sourceIp: string | null;
  headers: Record<string, string>;
  rawBody: Buffer;
  keyFingerprint: string | null;
  classification: StorableClassification;
}

export interface WriteResult {
  deliveryId: number;
  /** This delivery's event was new: its typed row is now in the ledger. */
  applied: boolean;
  /** Another delivery of the same event was stored before (a retry). */
  duplicate: boolean;
  /** What was stored: the record's classification, or its unparsed form if the ledger refused its fields. */
  classification: StorableClassification;
}

/**
 * A batch travels as one JSON array per statement, unpacked by json_to_recordset. Measured against
 * one array parameter per column (postgres.js escapes every element of every array in JavaScript):
 * 256 deliveries cost ~18 ms of client CPU that way, and a fraction of that with JSON.stringify,
 * which is native. Raw bodies go as base64 so every byte survives (NUL, invalid UTF-8).
 * Timestamps are ISO text, and the JSON parameters go as the strings built here: drizzle (applied to
 * the client in openDatabase) sets postgres.js's timestamp and json serializers to identity. On a
 * bare postgres.js client a string for a ::json parameter would be sent as a JSON string scalar.
 */
function deliveriesJson(records: readonly DeliveryRecord[]): string {
  return JSON.stringify(
    records.map((r, n) => ({
      n,
      delivery_uuid: r.deliveryUuid,
      environment: r.environment,
      received_at: r.receivedAt.toISOString(),
      source_ip: r.sourceIp,
      headers: r.headers,
      raw_body: r.rawBody.toString('base64'),
      fingerprint: r.keyFingerprint,
      ...parsedFields(r.classification),
    })),
  );
}

/**
 * The fields a delivery's classification gives its ledger row, as the batch JSON carries them: the
 * receiver's insert (above) and reparse's update (ledger-rederive.ts) write the same ones.
 */
export function parsedFields(c: StorableClassification) {
  const e = c.event;
  return {
    topic: c.topic,
    parse_status: c.status,
    parse_error: c.error ?? null,
    event_key: e?.key ?? null,
    entity_type: e?.entityType ?? null,
    entity_id: e?.entityId ?? null,
    event_time: e?.eventTime?.raw ?? null,
    event_time_sortable: e?.eventTime?.sortable ?? null,
  };
}

/**
 * One CTE per typed table: its rows arrive as their own JSON parameter, carrying the batch position
 * (n) of their delivery, and land only for the events this statement inserted, so a retry never
 * adds a second typed row and two deliveries of one event in a batch give one. Shared with reparse
 * (ledger-rederive.ts), whose statement names its CTEs `input` and `e` alike, and reads what each
 * wrote (`returning`: a typed row a reparse restored is a change; the receiver needs none).
 */
export function typedInsert(table: TypedTable, param: number, returning = false): string {
  const columns = TYPED_COLUMNS[table];
  return `t_${table} as (
        insert into ${table} (${EVENT_COLUMNS.join(', ')}, ${columns.map((c) => c.name).join(', ')})
        select ${EVENT_COLUMNS.map((name) => `i.${name}`).join(', ')}, ${columns.map((c) => `u.${c.name}`).join(', ')}
        from json_to_recordset($${param}::json) as u(n int, ${columns.map((c) => `${c.name} ${c.sqlType}`).join(', ')})
        join input i on i.n = u.n
        join e on e.id = i.id
        on conflict do nothing${returning ? `
        returning environment, event_key` : ''}
      )`;
}

/**
 * The whole batch is one statement, so it commits on its own (autocommit) in a single round trip:
 * on this 2-core machine every round trip to Postgres wakes another process, and BEGIN, the
 * statements and COMMIT as separate messages cost more than the rows themselves.
 * 1. ids come from the deliveries' sequence first, so the statement can tell its rows apart;
 * 2. each event key's first delivery in the batch claims the event in webhook_applied_events
 *    (ON CONFLICT DO NOTHING on its primary key (environment, event_day, event_key), an unpartitioned table,
 *    so the decision spans every month of webhook_deliveries): a concurrent statement offering the
 *    same key waits for the other's commit and then loses, so of 200 simultaneous retries exactly
 *    one is applied, decided by the database, not by process memory;
 * 3. every delivery is inserted, applied when its claim of step 2 succeeded;
 * 4. typed rows, for applied deliveries only, one CTE for each typed table the batch has rows for.
 * The text depends only on which typed tables those are, so each such set is prepared once per
 * connection. A CTE for every typed table, empty or not, made each statement open and lock all nine
 * tables and their indexes: at 8 connections (batches of about four deliveries) a statement took
 * 0.36-0.40 ms that way, 0.30-0.33 ms this way (bench/README.md, ingest; the rate stayed the same).
 */
const DELIVERY_COLUMNS = `id, delivery_uuid, environment, received_at, source_ip, headers, raw_body, signature_valid,
          signature_key_fingerprint, topic, parse_status, parse_error, event_key, entity_type, entity_id, event_time, event_time_sortable, applied, parser_version`;
const deliveryValues = (applied: string): string => `i.id, i.delivery_uuid, i.environment, i.received_at, i.source_ip, i.headers,
          decode(i.raw_body, 'base64'), true, i.fingerprint, i.topic, i.parse_status, i.parse_error, i.event_key, i.entity_type,
          i.entity_id, i.event_time, i.event_time_sortable, ${applied}, ${PARSER_VERSION}`;

function writeStatement(tables: readonly TypedTable[]): string {
  return `
      with input as materialized (
        select nextval('webhook_deliveries_id_seq') as id, u.*
        from json_to_recordset($1::json) as u(n int,
          delivery_uuid uuid, environment provider_environment, received_at timestamptz, source_ip text, headers jsonb,
          raw_body text, fingerprint text, topic text, parse_status webhook_parse_status, parse_error text,
          event_key text, entity_type text, entity_id text, event_time text, event_time_sortable text)
      ), candidates as (
        select distinct on (environment, event_key) id
        from input where event_key is not null
        order by environment, event_key, id
      ), e as (
        insert into webhook_applied_events (environment, event_day, event_key, delivery_id, received_at)
        select i.environment, webhook_event_day(i.event_time_sortable), i.event_key, i.id, i.received_at
        from input i join candidates c on c.id = i.id
        on conflict (environment, event_day, event_key) do nothing
        returning delivery_id as id
      ), stored as (
        insert into webhook_deliveries (${DELIVERY_COLUMNS})
        select ${deliveryValues('e.id is not null')}
        from input i left join e on e.id = i.id
      )${tables.map((table, i) => `, ${typedInsert(table, i + 2)}`).join('')}
      select json_agg(json_build_array(i.id, e.id is not null, i.event_key is not null and e.id is null) order by i.n)::text as outcome
      from input i left join e on e.id = i.id`;
}

/** The statement for each set of typed tables (keyed by their names), built once. */
const writeStatements = new Map<string, string>();

/** The typed rows of a batch, one JSON array per typed table, each row carrying its delivery's batch position n. */
export function typedJson(records: readonly Pick<DeliveryRecord, 'classification'>[]): string[] {
  const rows = typedRows(records);
  return TYPED_TABLES.map((table) => JSON.stringify(rows.get(table) ?? []));
}

/** The typed rows of a batch by table, only the tables it has rows for. */
function typedRows(records: readonly Pick<DeliveryRecord, 'classification'>[]): Map<TypedTable, Record<string, unknown>[]> {
  const rows = new Map<TypedTable, Record<string, unknown>[]>();
  records.forEach((r, n) => {
    const e = r.classification.event;
    if (!e) return;
    let table = rows.get(e.typed.table);
    if (table === undefined) rows.set(e.typed.table, (table = []));
    table.push({ n, ...e.typed.values });
  });
  return rows;
}

/**
 * Commits a batch of deliveries in one statement (see writeStatement). Nothing is acknowledged
 * before it resolves. The outcome comes back as one JSON text, in batch order, [[id, applied,
 * seen_before], ...]: one row to decode instead of one per delivery (postgres.js builds an object
 * per row and parses each column in JavaScript; JSON.parse is native).
 */
export async function writeDeliveries(sql: Sql, records: readonly DeliveryRecord[]): Promise<WriteResult[]> {
  const typed = typedRows(records);
  const tables = TYPED_TABLES.filter((table) => typed.has(table));
  const key = tables.join(',');
  let statement = writeStatements.get(key);
  if (statement === undefined) writeStatements.set(key, (statement = writeStatement(tables)));
  const parameters = [deliveriesJson(records), ...tables.map((table) => JSON.stringify(typed.get(table)))];
  const [row] = await sql.unsafe<{ outcome: string }[]>(statement, parameters, { prepare: true });
  const outcome = JSON.parse(row?.outcome ?? '[]') as [number, boolean, boolean][];
  if (outcome.length !== records.length) throw new Error(`commit result has ${outcome.length} deliveries for a batch of ${records.length}`);
  return outcome.map(([deliveryId, applied, seenBefore], i) => ({
    deliveryId,
    applied,
    duplicate: seenBefore,
    classification: (records[i] as DeliveryRecord).classification,
  }));
}
