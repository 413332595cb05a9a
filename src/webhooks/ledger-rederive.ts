import type { Sql, TransactionSql } from 'postgres';
import type { StorableClassification } from './classify.js';
import { parsedFields, typedInsert, typedJson } from './ledger-write.js';
import { TYPED_TABLES } from './typed-rows.js';
import { PARSER_VERSION } from './parser-version.js';
import { transaction } from '../db/transaction.js';

/** A stored delivery and what the current parser makes of its raw bytes. */
export interface Rederived {
  deliveryId: number;
  classification: StorableClassification;
}

export interface RederiveResult {
  deliveryId: number;
  /** The delivery is now the applied one of its event (its typed row is in the ledger). */
  applied: boolean;
  /** Its typed row was written now: it was missing (a typed table emptied to be rebuilt) or removed as stale. */
  typedWritten: boolean;
}

/**
 * Re-derives the parsed fields of stored deliveries (src/reparse) with the receiver's own rule and
 * typed-row writer (ledger-write.ts), in one transaction of two statements:
 * 1. RELEASE_STATEMENT gives up the claims (webhook_applied_events) the batch's deliveries hold, so
 *    the batch decides afresh (a delivery may now carry another key, or none);
 * 2. REDERIVE_STATEMENT: each event key's first delivery of the batch (one that was applied first,
 *    then the lowest id) claims the event, unless a delivery outside the batch holds it; every
 *    delivery of the batch is updated, applied when it claimed; typed rows for the claims by
 *    typedInsert (ON CONFLICT DO NOTHING on the typed tables' (environment, event_key) keys, so a
 *    typed row already there stays and a missing one is written; reparse/run.ts first removes, in
 *    the same transaction, the rows this parser would write otherwise: reparse/stale-typed-rows.ts).
 * The primary key of webhook_applied_events is the arbiter, as at receipt: a retry the receiver
 * inserts meanwhile either commits first, and the claim fails with a unique violation (the caller
 * retries the batch, which then sees it: reparse/run.ts), or waits for this commit and is stored as
 * a retry (its ON CONFLICT DO NOTHING).
 * It commits without waiting for its WAL to be flushed (`set local synchronous_commit = off`): the
 * receiver's commits queue behind every flush of the server's one WAL, and beside reparse its
 * backend spent most of its time in IO/WALSync and LWLock/WALWrite (bench/README.md, reparse). Nothing is lost that matters: WAL is flushed in order, so any later commit that is
 * durable (a receiver's) makes this one durable too, and a crash within the WAL writer's delay can
 * only undo batches whose deliveries keep their older parser_version and are reparsed again.
 */
const RELEASE_STATEMENT = `
      delete from webhook_applied_events a
      using webhook_deliveries d
      where d.id in (select (jsonb_array_elements($1::jsonb) ->> 'id')::bigint) and d.applied
        and a.environment = d.environment and a.event_day = webhook_event_day(d.event_time_sortable) and a.event_key = d.event_key
        and a.delivery_id = d.id`;

const REDERIVE_STATEMENT = `
      with input as materialized (
        select u.n, d.id, d.environment, d.received_at, d.applied as was_applied, u.topic, u.parse_status, u.parse_error, u.event_key,
               u.entity_type, u.entity_id, u.event_time, u.event_time_sortable
        from json_to_recordset($1::json) as u(n int, id bigint, topic text, parse_status webhook_parse_status, parse_error text,
          event_key text, entity_type text, entity_id text, event_time text, event_time_sortable text)
        join webhook_deliveries d on d.id = u.id
      ), candidates as (
        -- One primary-key probe of webhook_applied_events per row: a claim held outside the batch wins.
        select distinct on (i.environment, i.event_key) i.id, i.environment, webhook_event_day(i.event_time_sortable) as event_day,
               i.event_key, i.received_at
        from input i
        where i.event_key is not null
          and not exists (select 1 from webhook_applied_events a
                          where a.environment = i.environment and a.event_day = webhook_event_day(i.event_time_sortable) and a.event_key = i.event_key)
        order by i.environment, i.event_key, i.was_applied desc, i.id
      ), e as (
        insert into webhook_applied_events (environment, event_day, event_key, delivery_id, received_at)
        select c.environment, c.event_day, c.event_key, c.id, c.received_at from candidates c
        returning delivery_id as id
      ), updated as (
        update webhook_deliveries w
        set topic = i.topic, parse_status = i.parse_status, parse_error = i.parse_error, event_key = i.event_key,
            entity_type = i.entity_type, entity_id = i.entity_id, event_time = i.event_time, event_time_sortable = i.event_time_sortable,
            applied = exists (select 1 from candidates c where c.id = i.id), parser_version = ${PARSER_VERSION}
        from input i
        where w.id = i.id and w.received_at = i.received_at
      ), ${TYPED_TABLES.map((table, i) => typedInsert(table, i + 2, true)).join(', ')},
      written as (${TYPED_TABLES.map((table) => `select environment, event_key from t_${table}`).join(' union all ')})
      select coalesce(json_agg(json_build_array(i.id, c.id is not null,
                                                c.id is not null and exists (select 1 from written w where w.environment = i.environment and w.event_key = i.event_key))
                               order by i.n), '[]')::text as outcome
      from input i left join candidates c on c.id = i.id`;

function rederivedJson(batch: readonly Rederived[]): string {
  return JSON.stringify(batch.map((r, n) => ({ n, id: r.deliveryId, ...parsedFields(r.classification) })));
}

/** Writes a batch of re-derived deliveries (see REDERIVE_STATEMENT); returns their applied decisions in batch order. */
export async function rederiveDeliveries(sql: Sql | TransactionSql, batch: readonly Rederived[]): Promise<RederiveResult[]> {
  const input = rederivedJson(batch);
  const write = async (tx: TransactionSql): Promise<RederiveResult[]> => {
    await tx.unsafe('set local synchronous_commit = off');
    await tx.unsafe(RELEASE_STATEMENT, [input], { prepare: true });
    const [row] = await tx.unsafe<{ outcome: string }[]>(REDERIVE_STATEMENT, [input, ...typedJson(batch)], { prepare: true });
    const outcome = JSON.parse(row?.outcome ?? '[]') as [number, boolean, boolean][];
    if (outcome.length !== batch.length) throw new Error(`reparse result has ${outcome.length} deliveries for a batch of ${batch.length}: a delivery is gone`);
    return outcome.map(([deliveryId, applied, typedWritten]) => ({ deliveryId, applied, typedWritten }));
  };
  // Inside a caller's transaction (a dry run, rolled back) the two statements join it.
  return 'savepoint' in sql ? write(sql) : transaction(sql, write);
}

/** The applied-events key refused a claim: a retry of the event was committed meanwhile. */
export function isAppliedConflict(error: unknown): boolean {
  const e = error as { code?: string; constraint_name?: string } | undefined;
  return e?.code === '23505' && e.constraint_name === 'webhook_applied_events_pk';
}
