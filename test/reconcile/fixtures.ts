import { createHash, randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.js';
import { parseEventTime } from '../../src/webhooks/event-time.js';
import { silentLogger } from '../../src/log/logger.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import type { PassSummary } from '../../src/reconcile/types.js';
import { testMetrics } from '../helpers/metrics.js';

export type Env = 'sandbox' | 'production';
export const GRACE = 3600;
/** Tests anchor ledger times to the real clock: duplicate_delivery windows on real pass start times. */
export const T0 = new Date(Math.floor(Date.now() / 1000) * 1000 - 6 * 3600 * 1000);
export const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

export function pass(database: Database, now: Date, environment: Env = 'sandbox', options: { full?: boolean } = {}): Promise<PassSummary> {
  return runReconcilePass(
    { config: { PROVIDER_ENV: environment, WEBHOOK_GRACE_SECONDS: GRACE }, log: silentLogger(), database, ...testMetrics(database, environment) },
    now,
    options,
  );
}

/** An event_time with nine fractional digits, offset from T0 by whole seconds plus nanoseconds. */
export function eventTime(seconds: number, nanos = 0): string {
  const base = at(seconds).toISOString().slice(0, 19);
  return `${base}.${String(nanos).padStart(9, '0')}Z`;
}

interface OrderEventInput {
  env?: Env;
  order: string;
  state: string;
  eventTime: string;
  receivedAt: Date;
  externalReferenceId?: string;
}

/** One applied order event: its applied delivery and its typed row, as the receiver writes them. */
export async function orderEvent(database: Database, input: OrderEventInput): Promise<{ eventKey: string; deliveryId: number }> {
  const env = input.env ?? 'sandbox';
  const parsed = parseEventTime(input.eventTime);
  if (!parsed) throw new Error(`bad event time ${input.eventTime}`);
  const topic = `order/${input.state}`;
  const eventKey = createHash('sha256').update(`${topic}\n${input.order}\n${parsed.sortable}`).digest('hex');
  const deliveryId = await delivery(database, { env, eventKey, topic, entityId: input.order, eventTime: parsed.raw, sortable: parsed.sortable, receivedAt: input.receivedAt, applied: true });
  await database.sql`
    insert into order_events (environment, event_key, topic, received_at, order_uuid, order_state, external_reference_id, event_time, event_time_sortable)
    values (${env}, ${eventKey}, ${topic}, ${input.receivedAt.toISOString()}::timestamptz, ${input.order}, ${input.state}, ${input.externalReferenceId ?? null}, ${parsed.raw}, ${parsed.sortable})`;
  return { eventKey, deliveryId };
}

interface DeliveryInput {
  env: Env;
  eventKey: string;
  topic: string;
  entityId: string;
  eventTime: string;
  sortable: string;
  receivedAt: Date;
  entityType?: string;
  /** As the receiver writes it: true for the event's first delivery, false for retries. */
  applied?: boolean;
}

export async function delivery(database: Database, d: DeliveryInput): Promise<number> {
  const body = Buffer.from(JSON.stringify({ topic: d.topic, order_uuid: d.entityId, event_time: d.eventTime }));
  const [row] = await database.sql<{ id: string }[]>`
    insert into webhook_deliveries (delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic, parse_status,
                                    event_key, entity_type, entity_id, event_time, event_time_sortable, applied)
    values (${randomUUID()}, ${d.env}, ${d.receivedAt.toISOString()}::timestamptz, '{}'::jsonb, ${body}, true, ${d.topic}, 'parsed',
            ${d.eventKey}, ${d.entityType ?? 'order'}, ${d.entityId}, ${d.eventTime}, ${d.sortable}, ${d.applied ?? false})
    returning id`;
  // The receiver's claim of the event (webhook_applied_events decides applied-once across partitions).
  if (d.applied) {
    await database.sql`
      insert into webhook_applied_events (environment, event_day, event_key, delivery_id, received_at)
      values (${d.env}, webhook_event_day(${d.sortable}), ${d.eventKey}, ${row!.id}, ${d.receivedAt.toISOString()}::timestamptz)`;
  }
  return Number(row!.id);
}

/** A retry of an already applied event: another delivery row with the same event_key. */
export async function retryOf(database: Database, eventKey: string, receivedAt: Date, env: Env = 'sandbox'): Promise<number> {
  const [e] = await database.sql<{ topic: string; entity_id: string; event_time: string; event_time_sortable: string }[]>`
    select topic, entity_id, event_time, event_time_sortable from webhook_deliveries where environment = ${env} and event_key = ${eventKey} and applied`;
  return delivery(database, { env, eventKey, topic: e!.topic, entityId: e!.entity_id, eventTime: e!.event_time, sortable: e!.event_time_sortable, receivedAt });
}

export async function pollRun(database: Database, startedAt: Date, status = 'complete', env: Env = 'sandbox'): Promise<number> {
  const [row] = await database.sql<{ id: string }[]>`
    insert into poll_runs (environment, started_at, finished_at, status)
    values (${env}, ${startedAt.toISOString()}::timestamptz, ${new Date(startedAt.getTime() + 60_000).toISOString()}::timestamptz, ${status}) returning id`;
  return Number(row!.id);
}

/** What the poller writes when run `runId` lists the order in `state` (state_since moves only on change). */
export async function snapshot(
  database: Database,
  input: { env?: Env; order: string; state: string; seenAt: Date; runId: number; externalReferenceId?: string },
): Promise<void> {
  const env = input.env ?? 'sandbox';
  await database.sql`
    insert into order_snapshots as s (environment, order_uuid, state, external_reference_id, first_seen_at, last_seen_at,
                                      first_seen_run_id, last_seen_run_id, state_since, state_since_run_id)
    values (${env}, ${input.order}, ${input.state}, ${input.externalReferenceId ?? null}, ${input.seenAt.toISOString()}::timestamptz, ${input.seenAt.toISOString()}::timestamptz,
            ${input.runId}, ${input.runId}, ${input.seenAt.toISOString()}::timestamptz, ${input.runId})
    on conflict (environment, order_uuid) do update set
      last_seen_at = excluded.last_seen_at, last_seen_run_id = excluded.last_seen_run_id, state = excluded.state,
      state_since = case when s.state = excluded.state then s.state_since else excluded.state_since end,
      state_since_run_id = case when s.state = excluded.state then s.state_since_run_id else excluded.state_since_run_id end`;
  await database.sql`
    insert into order_state_observations (environment, order_uuid, state, previous_state, observed_at, poll_run_id)
    select ${env}, ${input.order}, ${input.state}, null, ${input.seenAt.toISOString()}::timestamptz, ${input.runId}
    where not exists (select 1 from order_state_observations o where o.environment = ${env} and o.order_uuid = ${input.order}
                      and o.state = ${input.state})`;
}

export interface Row {
  id: number;
  kind: string;
  status: string;
  entity_type: string;
  entity_id: string;
  subject: string;
  expected: string | null;
  observed: string | null;
  environment: string;
}

export async function discrepancies(database: Database, kind?: string): Promise<Row[]> {
  const rows = await database.sql<Row[]>`
    select id::int, kind::text, status::text, entity_type::text, entity_id, subject, expected, observed, environment::text
    from discrepancies ${kind ? database.sql`where kind = ${kind}` : database.sql``} order by id`;
  return [...rows];
}
