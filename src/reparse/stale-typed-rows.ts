import type { TransactionSql } from 'postgres';
import type { TopicFamily } from '../provider/vocabulary.js';
import { typedJson } from '../webhooks/ledger-write.js';
import type { Rederived } from '../webhooks/ledger-rederive.js';
import { TYPED_COLUMNS, TYPED_TABLES, type TypedTable } from '../webhooks/typed-rows.js';

/**
 * The typed table an applied delivery's row is in, by the family its stored entity_type names
 * (classify.ts: each family's rule builds its row in one table). A Record, so a family added to the
 * vocabulary fails the build until it is mapped here.
 */
const TABLE_OF: Record<TopicFamily, TypedTable> = {
  order: 'order_events',
  invoice: 'invoice_events',
  payout: 'payout_events',
  buyer: 'buyer_events',
  kyc: 'kyc_events',
  applicant: 'applicant_events',
  factoring: 'factoring_events',
  billing_configuration: 'billing_configuration_events',
};

/**
 * One CTE per typed table: the old typed row of each batch delivery applied before this run goes
 * unless the current parser gives that delivery the same event key and exactly the same values.
 * The new rows are materialized once (in the NOT EXISTS of a delete, json_to_recordset was read
 * again for every outer row), and only the table the delivery's stored entity_type names is probed.
 */
function deleteStale(table: TypedTable, param: number): string {
  const columns = TYPED_COLUMNS[table];
  const family = (Object.keys(TABLE_OF) as TopicFamily[]).find((f) => TABLE_OF[f] === table);
  return `n_${table} as materialized (
        select * from json_to_recordset($${param}::json) as u(n int, ${columns.map((c) => `${c.name} ${c.sqlType}`).join(', ')})
      ), d_${table} as (
        delete from ${table} t
        using old o left join n_${table} u on u.n = o.n
        where o.entity_type = '${family}' and t.environment = o.environment and t.event_key = o.event_key
          and (u.n is null or o.new_key is distinct from o.event_key
               or row(${columns.map((c) => `t.${c.name}`).join(', ')}) is distinct from row(${columns.map((c) => `u.${c.name}`).join(', ')}))
        returning o.id
      )`;
}

/**
 * $1: the batch as [{n, id, new_key}]; $2..: its new typed rows per table (ledger-write.ts
 * typedJson, the same parameters REDERIVE_STATEMENT gets). `old` holds the batch's deliveries that
 * are applied now, with the event key and entity type they were stored with.
 */
const STALE_STATEMENT = `
      with old as materialized (
        select u.n, d.id, d.environment, d.event_key, d.entity_type, u.new_key
        from json_to_recordset($1::json) as u(n int, id bigint, new_key text)
        join webhook_deliveries d on d.id = u.id
        where d.applied
      ), ${TYPED_TABLES.map((table, i) => deleteStale(table, i + 2)).join(', ')}
      select coalesce(json_agg(id), '[]')::text as removed
      from (${TYPED_TABLES.map((table) => `select id from d_${table}`).join(' union all ')}) removed`;

/**
 * Removes the typed rows a re-derivation would not write (run before rederiveDeliveries in the
 * batch's transaction, while the deliveries still carry the event key and applied flag an older
 * parser gave them). Without it, REDERIVE_STATEMENT's typed insert (ON CONFLICT DO NOTHING) kept
 * whatever an older parser had written: a delivery parser 1 applied with a year-0000 event_time
 * (event-time.ts) became invalid_shape and not applied, and its order_events row stayed, so the
 * rules still read it (and every pass failed casting its event_time_sortable to timestamptz); a
 * reference list parser 1 read through a double ("1.50" as "1.5", reference-list.ts) kept its old
 * references. After this, REDERIVE_STATEMENT writes the current parser's row for every delivery
 * that claims its event again: the typed tables are what re-deriving them from the deliveries gives.
 * A typed row already equal to the re-derived one is left alone, so a run over an unchanged ledger
 * rewrites nothing. Returns the ids of the deliveries whose typed row was removed.
 */
export async function removeStaleTypedRows(tx: TransactionSql, batch: readonly Rederived[]): Promise<Set<number>> {
  const input = JSON.stringify(batch.map((r, n) => ({ n, id: r.deliveryId, new_key: r.classification.event?.key ?? null })));
  const [row] = await tx.unsafe<{ removed: string }[]>(STALE_STATEMENT, [input, ...typedJson(batch)], { prepare: true });
  return new Set(JSON.parse(row?.removed ?? '[]') as number[]);
}
