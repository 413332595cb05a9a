import type postgres from 'postgres';
import { NO_FAULTS, startSimulator, type Simulator } from '../../sim/index.js';
import { ORDER_STATES_WITH_TOPIC } from '../../src/provider/vocabulary.js';
import { listAllOrders } from '../sim/helpers.js';
import { waitFor } from './harness.js';

/**
 * The simulator's own business during a failover (failover.ts): its orders' webhooks delivered to
 * the replicas and acknowledged while replication is held back, so that what an asynchronous
 * failover loses is real order events, and what the promoted ledger makes of them can be checked
 * against the simulator: each lost delivery either shows as an open `missed_webhook` finding for
 * its order and state, or its state was gone from the API before the poller on the promoted ledger
 * could see it (a later state superseded it). NO_FAULTS: every other `missed_webhook` is false.
 */

/** 1 real second = 10 simulated minutes. */
const TIME_SCALE = 600;
/**
 * One order a simulated minute: about 10 created and 8 moved on per real second, of which the held
 * second and the kill catch a dozen or so acknowledged order events (12-20 in the runs of
 * docs/high-availability.md); an order stays authorized 0.5-18 s (real)
 * and confirmed 12 s or more, so most states live past the first poll after the promotion and some
 * do not (both paths of the verdict below are taken).
 */
const ORDERS_PER_DAY = 1440;
/**
 * The provider's backoff (1 min doubling, 5 retries) at this time scale would be spent in 3 real
 * seconds, inside the outage. What is measured is the acknowledged deliveries, which are never
 * retried whatever the schedule; the schedule only decides when those refused during the outage
 * come back: every half second for 30 s, so each lands within half a second of the first 2xx, well
 * inside GRACE_SECONDS of the poller's first sight of its state (the relation the daemon's default
 * grace keeps to the provider's real retry window).
 */
const RETRY_EVERY_REAL_MS = 500;
const RETRIES = 60;
/** WEBHOOK_GRACE_SECONDS of the replicas: a few seconds, so the verdict comes within the test. */
export const GRACE_SECONDS = 5;

export async function startBusinessSimulator(): Promise<Simulator> {
  return startSimulator({
    seed: 'failover',
    faults: NO_FAULTS,
    business: { ordersPerDay: ORDERS_PER_DAY },
    timeScale: TIME_SCALE,
    retryBaseMs: RETRY_EVERY_REAL_MS * TIME_SCALE,
    retryFactor: 1,
    maxRetries: RETRIES,
  });
}

/**
 * Each order topic at one replica, taking turns (one address per topic, as behind a load balancer,
 * so a delivery acknowledged by one replica is never delivered again to the other), then plays the
 * business.
 */
export function deliverOrdersTo(sim: Simulator, webhookUrls: readonly string[]): void {
  ORDER_STATES_WITH_TOPIC.forEach((state, i) => sim.register('sandbox', `order/${state}`, webhookUrls[i % webhookUrls.length]!));
  sim.play();
}

export interface LostDelivery {
  order: string;
  state: string;
  eventKey: string;
}

export interface BusinessFigures {
  /** order events the simulator planned */
  planned: number;
  /** order events answered 2xx at least once */
  acknowledged: number;
  /** order events never answered 2xx (the simulator gave up, or had not finished) */
  neverAcknowledged: number;
  /** delivery attempts answered otherwise (503, no answer) and retried by the simulator */
  attemptsRefused: number;
  /** acknowledged order events whose event_key is absent from the promoted ledger */
  acknowledgedLost: number;
  /** lost, and an open missed_webhook finding names their order and state */
  lostShownAsMissedWebhook: number;
  /**
   * lost, not shown, because the API had moved the order past the state before any poll on the
   * promoted ledger saw it (no snapshot or observation of it there; the API shows another state)
   */
  lostSuperseded: (LostDelivery & { apiState: string; laterWebhookState: string | null })[];
  /** lost, not shown, and not superseded: a defect */
  lostUnexplained: (LostDelivery & { apiState: string | null; pollerSawState: boolean; finding: string | null })[];
  /** missed_webhook findings (any status) for a state whose delivery was acknowledged and lost */
  missedWebhookExplained: number;
  /** missed_webhook findings (any status) with no lost delivery behind them: false findings */
  missedWebhookUnexplained: { order: string; state: string; status: string }[];
  /** findings of kinds other than missed_webhook and duplicate_delivery about the simulator's orders */
  otherOrderFindings: { kind: string; order: string; status: string }[];
}

/**
 * Stops the business and waits for its last deliveries, then for a poll that began after them (it
 * sees every order's final state) and a reconciliation pass that began GRACE_SECONDS after that
 * poll ended (every state the poller saw has had its whole grace).
 */
export async function settleBusiness(sim: Simulator, sql: postgres.Sql): Promise<void> {
  sim.pause();
  await Promise.race([
    sim.drain({ fastForward: false }),
    new Promise((_, reject) => setTimeout(() => reject(new Error('the simulator did not drain its deliveries within 60 s')), 60_000).unref()),
  ]);
  const drainedAt = Date.now();
  const polled = await waitFor('a poll after the last delivery', async () => {
    const [row] = await sql<{ finished: Date }[]>`
      select max(finished_at) as finished from poll_runs where status = 'complete' and started_at > to_timestamp(${drainedAt / 1000})`;
    return row?.finished ?? undefined;
  }, 60_000, 200);
  await waitFor('a reconciliation pass a grace period after that poll', async () => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from reconcile_runs
      where status = 'complete' and started_at > ${polled}::timestamptz + make_interval(secs => ${GRACE_SECONDS})`;
    return row && row.n > 0 ? true : undefined;
  }, 60_000, 200);
}

export async function businessFigures(sim: Simulator, sql: postgres.Sql): Promise<BusinessFigures> {
  const planned = sim.plannedDeliveries().filter((p) => p.env === 'sandbox' && p.entityType === 'order');
  const attempts = sim.attempts().filter((a) => a.env === 'sandbox' && a.topic.startsWith('order/'));
  const ok = (a: (typeof attempts)[number]) => a.status !== null && a.status >= 200 && a.status < 300;
  const acked = new Set(attempts.filter(ok).map((a) => a.eventKey));
  const ackedPlanned = planned.filter((p) => acked.has(p.eventKey));
  const keys = ackedPlanned.map((p) => p.eventKey);
  const stored = new Set((await sql<{ event_key: string }[]>`
    select distinct event_key from webhook_deliveries where environment = 'sandbox' and event_key = any(${keys}::text[])`).map((r) => r.event_key));
  const lost: LostDelivery[] = ackedPlanned
    .filter((p) => !stored.has(p.eventKey))
    .map((p) => ({ order: p.entityId, state: p.topic.slice('order/'.length), eventKey: p.eventKey }));

  const apiState = new Map((await listAllOrders(sim, 'sandbox')).map((o) => [o.uuid, o.state]));
  const findings = await sql<{ kind: string; order: string; state: string; status: string }[]>`
    select kind::text, entity_id as order, subject as state, status::text from discrepancies
    where environment = 'sandbox' and entity_type = 'order' and kind <> 'duplicate_delivery'`;
  const sightings = new Set((await sql<{ order: string; state: string }[]>`
    select order_uuid::text as order, state from order_snapshots where environment = 'sandbox'
    union
    select order_uuid::text, state from order_state_observations where environment = 'sandbox'`).map((r) => `${r.order}|${r.state}`));
  const latestWebhook = new Map((await sql<{ order: string; state: string }[]>`
    select distinct on (order_uuid) order_uuid::text as order, order_state as state from order_events
    where environment = 'sandbox' order by order_uuid, event_time_sortable desc, event_key desc`).map((r) => [r.order, r.state]));

  const missed = findings.filter((f) => f.kind === 'missed_webhook');
  const lostIds = new Set(lost.map((l) => `${l.order}|${l.state}`));
  const figures: BusinessFigures = {
    planned: planned.length,
    acknowledged: ackedPlanned.length,
    neverAcknowledged: planned.length - ackedPlanned.length,
    attemptsRefused: attempts.filter((a) => !ok(a)).length,
    acknowledgedLost: lost.length,
    lostShownAsMissedWebhook: 0,
    lostSuperseded: [],
    lostUnexplained: [],
    missedWebhookExplained: missed.filter((f) => lostIds.has(`${f.order}|${f.state}`)).length,
    missedWebhookUnexplained: missed.filter((f) => !lostIds.has(`${f.order}|${f.state}`)).map(({ order, state, status }) => ({ order, state, status })),
    otherOrderFindings: findings.filter((f) => f.kind !== 'missed_webhook' && apiState.has(f.order)).map(({ kind, order, status }) => ({ kind, order, status })),
  };
  for (const l of lost) {
    const finding = missed.find((f) => f.order === l.order && f.state === l.state);
    const api = apiState.get(l.order) ?? null;
    const pollerSawState = sightings.has(`${l.order}|${l.state}`);
    if (finding?.status === 'open') figures.lostShownAsMissedWebhook += 1;
    else if (!finding && !pollerSawState && api !== null && api !== l.state) figures.lostSuperseded.push({ ...l, apiState: api, laterWebhookState: latestWebhook.get(l.order) ?? null });
    else figures.lostUnexplained.push({ ...l, apiState: api, pollerSawState, finding: finding?.status ?? null });
  }
  return figures;
}
