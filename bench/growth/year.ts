import type { Sql } from 'postgres';
import { ensurePartitions } from '../../src/ledger/partitions.js';
import { addMonths, monthStart } from '../../src/ledger/partition-months.js';

/**
 * A large merchant's year in the delivery ledger, set-based (INSERT … SELECT generate_series), never
 * over HTTP: `deliveries` signed order deliveries spread evenly over the twelve months before the
 * current one, shaped as the receiver stores them (a ~330-byte JSON body, the stored headers with
 * the signature, parsed fields, a 64-hex event key), 1 % of them a retry of the event before
 * (not applied), and every applied event claimed in webhook_applied_events. Loaded month by month,
 * each month one statement per table; webhook_applied_events' primary key is rebuilt once at the
 * end (a bulk build instead of millions of random insertions into it).
 */
export async function fillYear(sql: Sql, deliveries: number, progress: (line: string) => void): Promise<void> {
  const first = addMonths(monthStart(new Date()), -12);
  await ensurePartitions(sql, first, 12);
  await sql`set synchronous_commit = off`;
  await sql`set maintenance_work_mem = '512MB'`;
  await sql`alter table webhook_applied_events drop constraint webhook_applied_events_pk`;
  const [start] = await sql<{ id: string }[]>`select coalesce(max(id), 0)::text as id from webhook_deliveries`;
  const base = Number(start!.id);
  const perMonth = Math.ceil(deliveries / 12);
  for (let m = 0; m < 12; m += 1) {
    const from = m * perMonth + 1;
    const to = Math.min(deliveries, (m + 1) * perMonth);
    if (from > to) break;
    const monthFrom = addMonths(first, m).toISOString();
    const monthTo = addMonths(first, m + 1).toISOString();
    const started = performance.now();
    await sql`
      insert into webhook_deliveries (id, delivery_uuid, environment, received_at, source_ip, headers, raw_body, signature_valid,
                                      signature_key_fingerprint, topic, parse_status, event_key, entity_type, entity_id,
                                      event_time, event_time_sortable, applied, parser_version)
      select ${base}::bigint + g, md5('d' || g)::uuid, 'sandbox', t.at, '203.0.113.7',
             jsonb_build_object('content-type', 'application/json', 'user-agent', 'provider-webhooks/1.0',
                                'x-service-signature', md5('s' || g) || md5('t' || g), 'content-length', '330'),
             convert_to('{"topic":"order/confirmed","order_uuid":"' || o.uuid || '","order_state":"confirmed","external_reference_id":"ORD-'
                        || o.n || '","event_time":"' || t.sortable || '","buyer":{"uuid":"' || md5('b' || o.n)::uuid
                        || '","name":"Acme GmbH","legal_form":"GmbH"},"net_term":30}', 'UTF8'),
             true, 'a1b2c3d4e5f6', 'order/confirmed', 'parsed', md5('k' || o.n) || md5('l' || o.n), 'order', o.uuid,
             t.sortable, t.sortable, g % 100 <> 0, 3
      from generate_series(${from}::bigint, ${to}::bigint) g
      -- every 100th delivery repeats the event of the delivery before it
      cross join lateral (select case when g % 100 = 0 then g - 1 else g end as n) k
      cross join lateral (select k.n, md5('o' || k.n)::uuid::text as uuid) o
      cross join lateral (
        select ${monthFrom}::timestamptz + (${monthTo}::timestamptz - ${monthFrom}::timestamptz) * ((g - ${from}) / (${to - from + 1}::float8)) as at
      ) r
      cross join lateral (select r.at, to_char(r.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z' as sortable) t`;
    await sql`
      insert into webhook_applied_events (environment, event_day, event_key, delivery_id, received_at)
      select environment, webhook_event_day(event_time_sortable), event_key, id, received_at from webhook_deliveries
      where received_at >= ${monthFrom}::timestamptz and received_at < ${monthTo}::timestamptz and applied and id > ${base}`;
    progress(`growth: month ${m + 1}/12 loaded (${to - from + 1} deliveries, ${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await sql`select setval('webhook_deliveries_id_seq', (select max(id) from webhook_deliveries))`;
  await sql`alter table webhook_applied_events add constraint webhook_applied_events_pk primary key (environment, event_day, event_key)`;
  await sql`vacuum analyze webhook_deliveries`;
  await sql`vacuum analyze webhook_applied_events`;
  await sql`checkpoint`.catch(() => undefined);
}
