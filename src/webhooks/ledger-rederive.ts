import type { Sql, TransactionSql } from 'postgres';
import type { StorableClassification } from './classify.js';
import { TYPED_TABLES, typedInsert, typedJson } from './ledger-write.js';
import { PARSER_VERSION } from './parser-version.js';

/** A stored delivery and what the current parser makes of its raw bytes. */
export interface Rederived {
  deliveryId: number;
  classification: StorableClassification;
}

export interface RederiveResult {
  deliveryId: number;
  /** The delivery is now the applied one of its event (its typed row is in the ledger). */
  applied: boolean;
}

/**
 * Re-derives the parsed fields of stored deliveries (src/reparse) with the receiver's own rule and
 * typed-row writer (ledger-write.ts), in one statement:
 * 1. each event key's first delivery of the batch (one already applied first, then the lowest id)
 *    becomes the applied one, unless a delivery outside the batch is applied for that key;
 * 2. every other delivery of the batch is updated not applied (a retry, or still unparsed);
 * 3. typed rows, for the applied ones, by typedInsert: ON CONFLICT DO NOTHING on the typed tables'
 *    (environment, event_key) keys, so a typed row already there stays and a missing one is written.
 * The unique index of applied deliveries (webhook_deliveries_event_uq) is the arbiter, as at receipt:
 * a retry the receiver inserts meanwhile either commits first, and this update fails with a unique
 * violation (the caller retries the batch, which then sees it: reparse/run.ts), or waits for this
 * commit and is stored as a retry (its ON CONFLICT DO NOTHING).
 * It commits without waiting for its WAL to be flushed (synchronous_commit off for its own
 * transaction): the receiver's commits queue behind every flush of the server's one WAL, and beside
 * reparse its backend spent most of its time in IO/WALSync and LWLock/WALWrite (bench/README.md,
 * reparse). Nothing is lost that matters: WAL is flushed in order, so any later commit that is
 * durable (a receiver's) makes this one durable too, and a crash within the WAL writer's delay can
 * only undo batches whose deliveries keep their older parser_version and are reparsed again.
 */
const REDERIVE_STATEMENT = `
      with input as materialized (
        select u.n, d.id, d.environment, d.received_at, d.applied as was_applied, u.topic, u.parse_status, u.parse_error, u.event_key,
               u.entity_type, u.entity_id, u.event_time, u.event_time_sortable
        from json_to_recordset($1::json) as u(n int, id bigint, topic text, parse_status webhook_parse_status, parse_error text,
          event_key text, entity_type text, entity_id text, event_time text, event_time_sortable text)
        join webhook_deliveries d on d.id = u.id
      ), candidates as (
        -- The key's applied delivery, if any, by one probe of webhook_deliveries_event_uq per row
        -- (LATERAL ... LIMIT 1): as a NOT EXISTS the planner hashed every applied delivery of the
        -- ledger (43 s per batch at 925,000 deliveries).
        select distinct on (i.environment, i.event_key) i.id
        from input i
        left join lateral (
          select w.id from webhook_deliveries w
          where w.environment = i.environment and w.event_key = i.event_key and w.applied
          limit 1
        ) a on true
        where i.event_key is not null and (a.id is null or a.id in (select x.id from input x))
        order by i.environment, i.event_key, i.was_applied desc, i.id
      ), e as (
        update webhook_deliveries w
        set topic = i.topic, parse_status = i.parse_status, parse_error = i.parse_error, event_key = i.event_key,
            entity_type = i.entity_type, entity_id = i.entity_id, event_time = i.event_time, event_time_sortable = i.event_time_sortable,
            applied = true, parser_version = ${PARSER_VERSION}
        from input i join candidates c on c.id = i.id
        where w.id = i.id
        returning w.id
      ), others as (
        update webhook_deliveries w
        set topic = i.topic, parse_status = i.parse_status, parse_error = i.parse_error, event_key = i.event_key,
            entity_type = i.entity_type, entity_id = i.entity_id, event_time = i.event_time, event_time_sortable = i.event_time_sortable,
            applied = false, parser_version = ${PARSER_VERSION}
        from input i
        where w.id = i.id and not exists (select 1 from candidates c where c.id = i.id)
      ), ${TYPED_TABLES.map((table, i) => typedInsert(table, i + 2)).join(', ')}, no_flush_wait as (
        select set_config('synchronous_commit', 'off', true) as setting
      )
      select coalesce(json_agg(json_build_array(i.id, c.id is not null) order by i.n), '[]')::text as outcome
      from input i left join candidates c on c.id = i.id
      where (select setting from no_flush_wait) is not null`;

function rederivedJson(batch: readonly Rederived[]): string {
  return JSON.stringify(
    batch.map((r, n) => {
      const c = r.classification;
      const e = c.event;
      return {
        n,
        id: r.deliveryId,
        topic: c.topic,
        parse_status: c.status,
        parse_error: c.error ?? null,
        event_key: e?.key ?? null,
        entity_type: e?.entityType ?? null,
        entity_id: e?.entityId ?? null,
        event_time: e?.eventTime?.raw ?? null,
        event_time_sortable: e?.eventTime?.sortable ?? null,
      };
    }),
  );
}

/** Writes a batch of re-derived deliveries (see REDERIVE_STATEMENT); returns their applied decisions in batch order. */
export async function rederiveDeliveries(sql: Sql | TransactionSql, batch: readonly Rederived[]): Promise<RederiveResult[]> {
  const [row] = await sql.unsafe<{ outcome: string }[]>(REDERIVE_STATEMENT, [rederivedJson(batch), ...typedJson(batch)], { prepare: true });
  const outcome = JSON.parse(row?.outcome ?? '[]') as [number, boolean][];
  if (outcome.length !== batch.length) throw new Error(`reparse result has ${outcome.length} deliveries for a batch of ${batch.length}: a delivery is gone`);
  return outcome.map(([deliveryId, applied]) => ({ deliveryId, applied }));
}

/** The unique index of applied deliveries refused an update: a retry of the event was committed meanwhile. */
export function isAppliedConflict(error: unknown): boolean {
  const e = error as { code?: string; constraint_name?: string } | undefined;
  return e?.code === '23505' && e.constraint_name === 'webhook_deliveries_event_uq';
}
