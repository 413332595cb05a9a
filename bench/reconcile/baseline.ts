import type { Database } from '../../src/db/database.js';
import { ORDER_STATES_WITH_TOPIC } from '../../src/reconcile/types.js';

const TOPICS = new Set<string>(ORDER_STATES_WITH_TOPIC);

/**
 * The baseline a user would write by hand: load the orders, then per order fetch its snapshot, its
 * events and its duplicate deliveries, decide in JavaScript, and upsert each finding, one query at a
 * time (every query uses an index). Timed on a sample of orders and extrapolated linearly.
 */
export async function naiveBaseline(
  database: Database,
  orders: number,
  sample: number,
  graceSeconds: number,
): Promise<{ sample: number; msPerOrder: number }> {
  const { sql } = database;
  const uuids = (await sql<{ u: string }[]>`
    select u::text from (select order_uuid as u from order_snapshots where environment = 'sandbox' limit ${sample}) x`).map((r) => r.u);
  const [run] = await sql<{ id: string; started: string }[]>`
    select id::text, started_at::text as started from poll_runs where environment = 'sandbox' and status = 'complete'
    order by started_at desc limit 1`;
  const now = Date.now();
  const t0 = performance.now();
  for (const uuid of uuids) {
    const [snap] = await sql<{ state: string; since: string; last_run: string }[]>`
      select state, state_since::text as since, last_seen_run_id::text as last_run from order_snapshots
      where environment = 'sandbox' and order_uuid = ${uuid}`;
    const events = await sql<{ state: string; key: string; received: string }[]>`
      select order_state as state, event_key as key, received_at::text as received from order_events
      where environment = 'sandbox' and order_uuid = ${uuid} order by event_time_sortable`;
    // An event's retries: its deliveries not applied (the typed row is the applied one's).
    const dups = await sql<{ id: string }[]>`
      select d.id::text from order_events o
      join webhook_deliveries d on d.environment = o.environment and d.event_key = o.event_key and d.event_key is not null and not d.applied
      where o.environment = 'sandbox' and o.order_uuid = ${uuid}`;
    const findings: [string, string, string][] = [];
    const states = new Set(events.map((e) => e.state));
    const old = (ts: string) => now - Date.parse(ts) > graceSeconds * 1000;
    if (snap && TOPICS.has(snap.state) && !states.has(snap.state) && old(snap.since)) findings.push(['missed_webhook', 'order', snap.state]);
    const latest = events.at(-1);
    if (snap && latest && latest.state !== snap.state && TOPICS.has(snap.state) && states.has(snap.state) && old(snap.since) && old(latest.received)) {
      findings.push(['state_mismatch', 'order', '']);
    }
    if ((!snap || Number(snap.last_run) < Number(run?.id)) && events.length > 0) findings.push(['orphan_webhook', 'order', '']);
    const seen = new Map<string, number>();
    for (const e of events) seen.set(e.state, (seen.get(e.state) ?? 0) + 1);
    for (const [state, n] of seen) if (n > 1) findings.push(['duplicate_event', 'order', state]);
    for (const [kind, type, subject] of findings) {
      await sql`
        insert into discrepancies (environment, kind, entity_type, entity_id, subject, details, evidence_hash)
        values ('sandbox', ${kind}, ${type}, ${uuid}, ${subject}, 'baseline', '')
        on conflict (environment, kind, entity_type, entity_id, subject) do update set last_checked_at = now()`;
    }
    for (const d of dups) {
      await sql`
        insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, details, resolved_at)
        values ('sandbox', 'duplicate_delivery', 'resolved', 'webhook_delivery', ${d.id}, '', 'baseline', now())
        on conflict do nothing`;
    }
  }
  const elapsed = performance.now() - t0;
  void orders;
  return { sample: uuids.length, msPerOrder: elapsed / Math.max(1, uuids.length) };
}
