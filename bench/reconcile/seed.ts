import type { Sql } from 'postgres';
import { entityIdOf, invoiceToCashEvents, seedInvoiceToCash } from './invoice-seed.js';

/**
 * Bulk-seeds one environment's ledger for the reconciliation benchmark with generate_series, in a
 * shape a live ledger has: every order polled (confirmed, a few shipped) with order/authorized and
 * order/confirmed webhooks, three invoice webhooks per order (deliveries and events only: the order
 * rules never read invoice_events), 1% of events delivered twice (the first delivery of each event
 * `applied`, the retry not, as the receiver writes them), and one fault in a thousand
 * orders of each order kind (missed_webhook, state_mismatch, duplicate_event, orphan_webhook).
 * About 5 deliveries per order: 1,000,000 orders give ~5,010,000 deliveries.
 *
 * With `invoiceToCash` (issue 24), the same orders also carry what follows each invoice to cash:
 * the invoice events' typed rows, factoring, payouts, payout reports and the payouts' bank credits
 * (invoice-seed.ts, which says what and which faults); about 6 deliveries per order then.
 */
export interface SeedShape {
  orders: number;
  deliveries: number;
  orderEvents: number;
  expected: Record<string, number>;
}

export async function seedLedger(sql: Sql, orders: number, graceSeconds: number, opts: { invoiceToCash?: boolean } = {}): Promise<SeedShape> {
  const invoiceToCash = opts.invoiceToCash ?? false;
  await sql`set synchronous_commit = off`;
  await sql`set maintenance_work_mem = '256MB'`;
  await sql`set work_mem = '64MB'`;
  const [run] = await sql<{ id: string }[]>`
    insert into poll_runs (environment, started_at, finished_at, status)
    values ('sandbox', now() - interval '20 hours', now() - interval '19 hours', 'complete') returning id`;
  const runId = Number(run!.id);
  // i % 1000: 1 missed webhook, 2 mismatch, 3 duplicate event, 4 orphan (no snapshot), 5 shipped.
  // Secondary indexes are built once after the load (a bulk build is several times faster than
  // 15,000,000 random index insertions) and restored exactly as the migrations define them.
  const definitions = () => sql<{ def: string }[]>`select indexdef as def from pg_indexes where schemaname = 'public' order by indexdef`;
  const before = (await definitions()).map((r) => r.def);
  const indexes = await sql<{ name: string; def: string }[]>`
    select indexname as name, indexdef as def from pg_indexes
    where schemaname = 'public'
      and tablename in ('webhook_deliveries', 'order_events', 'invoice_events', 'factoring_events', 'payout_events', 'payout_report_rows',
                        'statement_lines', 'statement_entries')
      and indexname not like '%pk' and indexname not like '%pkey'`;
  for (const index of indexes) await sql.unsafe(`drop index "${index.name}"`);
  // So are the keys whose values come in random order (sha256 event keys, md5 order uuids): each of
  // 50,000,000 applied events' insertions at 10,000,000 orders touched a random page of a key index
  // larger than shared_buffers, and after each checkpoint wrote it whole to the WAL (the load ran
  // at 650 MB of heap per 10 minutes; 2026-11-29). The heap keeps its arrival order.
  const keys = await sql<{ table: string; name: string; def: string }[]>`
    select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as def from pg_constraint
    where contype in ('p', 'u') and connamespace = 'public'::regnamespace
      and conrelid::regclass::text in ('webhook_applied_events', 'order_events', 'order_snapshots', 'order_state_observations')`;
  for (const key of keys) await sql.unsafe(`alter table "${key.table}" drop constraint "${key.name}"`);
  await sql`
    create unlogged table bench_ev as
    with order_ev as (
      select i, s.state, s.seq from generate_series(1, ${orders}) i
      cross join lateral (values ('authorized', 1), ('confirmed', 2)) s(state, seq)
      where not (i % 1000 = 1 and s.state = 'confirmed')
      union all select i, 'declined', 3 from generate_series(1, ${orders}) i where i % 1000 = 2
      union all select i, 'confirmed', 4 from generate_series(1, ${orders}) i where i % 1000 = 3
    ),
    all_ev as (
      select i, 'order' as entity_type, 'order/' || state as topic, state, seq, null::timestamptz as at from order_ev
      union all
      select i, 'invoice', t.topic, null, t.seq,
             case when ${invoiceToCash} and i % 10000 = 11 then now() - interval '10 days' + (i % 3600) * interval '1 second' end
      from generate_series(1, ${orders}) i
      cross join (values ('invoice/created', 5), ('invoice/payment', 6), ('invoice/complete', 7)) t(topic, seq)
      ${invoiceToCash ? invoiceToCashEvents(sql, orders) : sql``}
    ),
    timed as (
      select row_number() over () as n, i, entity_type, topic, state, md5('o' || i)::uuid as order_uuid, ${entityIdOf(sql)} as entity_id,
             coalesce(at, now() - interval '1 day' + (i % 3600) * interval '1 second') + seq * interval '1 minute' as ts
      from all_ev
    )
    select *, to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z' as sortable,
           encode(sha256(convert_to(topic || entity_id || n::text, 'UTF8')), 'hex') as event_key
    from timed`;
  await sql`
    insert into webhook_deliveries (id, delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic,
                                    parse_status, event_key, entity_type, entity_id, event_time, event_time_sortable, applied)
    select n, md5('d' || n)::uuid, 'sandbox', ts + interval '1 second', '{"content-type":"application/json"}',
           convert_to('{"topic":"' || topic || '","uuid":"' || entity_id || '","event_time":"' || sortable || '"}', 'UTF8'),
           true, topic, 'parsed', event_key, entity_type, entity_id, sortable, sortable, true
    from bench_ev`;
  const [max] = await sql<{ n: string }[]>`select max(n)::text as n from bench_ev`;
  await sql`
    insert into webhook_deliveries (id, delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic,
                                    parse_status, event_key, entity_type, entity_id, event_time, event_time_sortable, applied)
    select ${max!.n}::bigint + row_number() over (), md5('r' || n)::uuid, 'sandbox', ts + interval '2 minutes', '{}',
           -- A retry repeats its event's bytes (duplicate_delivery compares them with the applied delivery's).
           convert_to('{"topic":"' || topic || '","uuid":"' || entity_id || '","event_time":"' || sortable || '"}', 'UTF8'),
           true, topic, 'parsed', event_key, entity_type, entity_id, sortable, sortable, false
    from bench_ev where n % 100 = 0`;
  await sql`select setval('webhook_deliveries_id_seq', (select max(id) from webhook_deliveries))`;
  // The receiver's claim of each applied event (its arbiter across partitions).
  await sql`
    insert into webhook_applied_events (environment, event_day, event_key, delivery_id, received_at)
    select environment, webhook_event_day(event_time_sortable), event_key, id, received_at from webhook_deliveries where applied`;
  await sql`
    insert into order_events (environment, event_key, topic, received_at, order_uuid, order_state, external_reference_id,
                              event_time, event_time_sortable)
    select 'sandbox', event_key, topic, ts + interval '1 second', order_uuid, state, 'EXT-' || i, sortable, sortable
    from bench_ev where entity_type = 'order'`;
  await sql`
    insert into order_snapshots (environment, order_uuid, state, external_reference_id, first_seen_at, last_seen_at,
                                 first_seen_run_id, last_seen_run_id, state_since, state_since_run_id)
    select 'sandbox', md5('o' || i)::uuid, case when i % 1000 = 5 then 'shipped' else 'confirmed' end, 'EXT-' || i,
           now() - interval '20 hours', now() - interval '19 hours', ${runId}, ${runId}, now() - interval '20 hours', ${runId}
    from generate_series(1, ${orders}) i where i % 1000 <> 4`;
  await sql`
    insert into order_state_observations (environment, order_uuid, state, previous_state, observed_at, poll_run_id)
    select 'sandbox', order_uuid, state, null, state_since, ${runId} from order_snapshots`;
  const invoiceFaults = invoiceToCash ? await seedInvoiceToCash(sql, orders) : {};
  const [counts] = await sql<{ deliveries: string; order_events: string }[]>`
    select (select count(*) from webhook_deliveries)::text as deliveries, (select count(*) from order_events)::text as order_events`;
  await sql`drop table bench_ev`;
  // A partitioned table's index is listed as CREATE INDEX … ON ONLY …, which would build none of
  // its partitions' indexes: created on the whole table instead.
  for (const index of indexes) await sql.unsafe(index.def.replace(' ON ONLY ', ' ON '));
  for (const key of keys) await sql.unsafe(`alter table "${key.table}" add constraint "${key.name}" ${key.def}`);
  const after = (await definitions()).map((r) => r.def);
  if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error(`the seed did not restore the ledger's indexes as they were: ${JSON.stringify({ before, after })}`);
  await sql`vacuum analyze`;
  // Flush the seed's dirty pages now: a bulk load of millions of rows leaves the checkpointer
  // writing them out for minutes, and passes timed meanwhile measured the seed's aftermath: at
  // 1,000,000 orders a full pass took 5.7-6.3 s right after the seed and 3.9-4.2 s after this
  // checkpoint (state_mismatch 3.3 s and 1.6 s), at 100,000 the same either way (bench/README.md).
  // A ledger that grew over months is the settled one. Needs a superuser (or pg_checkpoint).
  await sql`checkpoint`.catch(() => undefined);
  const everyThousandth = (k: number): number => (orders >= k ? Math.floor((orders - k) / 1000) + 1 : 0);
  void graceSeconds;
  return {
    orders,
    deliveries: Number(counts!.deliveries),
    orderEvents: Number(counts!.order_events),
    expected: {
      missed_webhook: everyThousandth(1),
      state_mismatch: everyThousandth(2),
      duplicate_event: everyThousandth(3),
      orphan_webhook: everyThousandth(4),
      duplicate_delivery: Math.floor(Number(max!.n) / 100),
      ...invoiceFaults,
    },
  };
}
