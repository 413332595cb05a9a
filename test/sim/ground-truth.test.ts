import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES } from '../../sim/options.js';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import type { GroundTruth } from '../../sim/ground-truth.js';
import { DAY_MS, HOUR_MS } from '../../sim/time.js';
import { ALL_BARE_TOPICS, listAllOrders, startReceiver, type Received } from './helpers.js';

const STATES_WITH_TOPIC = new Set(['authorized', 'pending', 'confirmed', 'declined', 'canceled']);

let sim: Simulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let accepted: Received[];
let rejected: Received[];
let truth: GroundTruth;
let api: { uuid: string; state: string }[];

beforeAll(async () => {
  const secretHolder: { secret?: string } = {};
  // A receiver that checks signatures as the real one does: wrong secret, 401, nothing kept.
  receiver = await startReceiver((r) => {
    const expected = createHmac('sha256', secretHolder.secret ?? '').update(r.body).digest('hex');
    return r.headers['x-service-signature'] === expected ? 200 : 401;
  });
  sim = await startSimulator({ seed: 'truth', faults: { ...DEFAULT_FAULT_RATES, neverDelivered: 0.1, secondEvent: 0.05 }, business: { ordersPerDay: 120 } });
  secretHolder.secret = sim.secrets.sandbox;
  for (const topic of ALL_BARE_TOPICS) sim.register('sandbox', topic, receiver.url);
  await sim.advance(3 * DAY_MS);
  await sim.drain();
  const ok = (r: Received) => r.headers['x-service-signature'] === createHmac('sha256', sim.secrets.sandbox).update(r.body).digest('hex');
  accepted = receiver.received.filter(ok);
  rejected = receiver.received.filter((r) => !ok(r));
  truth = sim.groundTruth({ environment: 'sandbox' });
  api = await listAllOrders(sim, 'sandbox');
});
afterAll(async () => {
  await sim.stop();
  await receiver.close();
});

/** A naive reconciler over what the receiver accepted, to check the ground truth is exact for it. */
function observe() {
  const orderEvents = accepted.map((r) => JSON.parse(r.body.toString('utf8'))).filter((b) => typeof b.order_uuid === 'string' && typeof b.order_state === 'string');
  const statesByOrder = new Map<string, Map<string, Set<string>>>();
  for (const e of orderEvents) {
    const states = statesByOrder.get(e.order_uuid) ?? new Map<string, Set<string>>();
    states.set(e.order_state, (states.get(e.order_state) ?? new Set()).add(e.event_time));
    statesByOrder.set(e.order_uuid, states);
  }
  const apiIds = new Set(api.map((o) => o.uuid));
  const missed = api.filter((o) => STATES_WITH_TOPIC.has(o.state) && !statesByOrder.get(o.uuid)?.has(o.state)).map((o) => o.uuid);
  const orphans = [...statesByOrder.keys()].filter((id) => !apiIds.has(id));
  const duplicates: string[] = [];
  for (const [id, states] of statesByOrder) for (const [state, times] of states) if (times.size > 1) duplicates.push(`${id}/${state}`);
  const bodies = new Map<string, number>();
  for (const r of accepted) {
    const key = createHash('sha256').update(r.body).digest('hex');
    bodies.set(key, (bodies.get(key) ?? 0) + 1);
  }
  const extraDeliveries = [...bodies.values()].reduce((s, n) => s + n - 1, 0);
  return { missed, orphans, duplicates, extraDeliveries };
}

const sorted = (xs: string[]) => [...xs].sort();

describe('ground truth', () => {
  it('lists exactly the missed webhooks, orphans, duplicate events and duplicate deliveries a receiver sees', () => {
    const seen = observe();
    const of = (kind: string, status = 'open') => truth.discrepancies.filter((d) => d.kind === kind && d.status === status);
    expect(sorted(of('missed_webhook').map((d) => d.entity_id))).toEqual(sorted(seen.missed));
    expect(sorted(of('orphan_webhook').map((d) => d.entity_id))).toEqual(sorted(seen.orphans));
    expect(sorted(of('duplicate_event').filter((d) => d.entity_type === 'order').map((d) => `${d.entity_id}/${d.subject}`))).toEqual(sorted(seen.duplicates));
    expect(of('duplicate_delivery', 'resolved')).toHaveLength(seen.extraDeliveries);
    expect(seen.missed.length).toBeGreaterThan(0);
    expect(seen.orphans.length).toBeGreaterThan(0);
    expect(seen.duplicates.length).toBeGreaterThan(0);
    expect(seen.extraDeliveries).toBeGreaterThan(0);
    expect(truth.uncertain_deliveries).toEqual([]);
  });

  it('names for each missed webhook the state the API shows', () => {
    const state = new Map(api.map((o) => [o.uuid, o.state]));
    for (const d of truth.discrepancies.filter((x) => x.kind === 'missed_webhook')) expect(d.expected).toBe(state.get(d.entity_id));
  });

  it('records wrong-environment signatures as rejected deliveries, not discrepancies', () => {
    expect(truth.rejected_deliveries.length).toBeGreaterThan(0);
    const rejectedBodies = new Set(rejected.map((r) => createHash('sha256').update(r.body).digest('hex')));
    for (const r of rejected) {
      expect(r.headers['x-service-signature']).toBe(createHmac('sha256', sim.secrets.production).update(r.body).digest('hex'));
    }
    expect(rejectedBodies.size).toBe(truth.rejected_deliveries.length);
  });

  it('marks late deliveries as resolved findings that arrived after the grace period', () => {
    const late = truth.discrepancies.filter((d) => d.kind === 'missed_webhook' && d.status === 'resolved');
    expect(late.length).toBeGreaterThan(0);
    for (const d of late) expect(d.timing_dependent).toBe(true);
    expect(sim.attempts().filter((a) => a.variant === 'delayed' && a.status === 200)).toHaveLength(late.length);
    const delayedAt = sim.attempts().filter((a) => a.variant === 'delayed').map((a) => a.simAt);
    const planned = sim.plannedDeliveries().filter((p) => p.variant === 'delayed' && p.env === 'sandbox');
    for (const p of planned) {
      const body = JSON.parse(p.body.toString('utf8'));
      expect(p.dueAt - Date.parse(body.event_time)).toBeGreaterThan(HOUR_MS);
    }
    expect(delayedAt.length).toBe(planned.length);
  });

  it('uses the discrepancy report field names and the contract kinds', () => {
    const kinds = new Set(['missed_webhook', 'state_mismatch', 'orphan_webhook', 'duplicate_event', 'duplicate_delivery', 'payout_not_on_statement', 'statement_credit_without_payout', 'payout_amount_mismatch', 'payout_cancelled_but_credited', 'payout_unknown_invoice',
      'invoice_not_paid_out', 'invoice_paid_out_twice', 'payout_pays_canceled_invoice', 'buyer_paid_merchant_directly', 'payout_deduction_mismatch', 'payout_report_mismatch']);
    for (const d of truth.discrepancies) {
      expect(kinds.has(d.kind)).toBe(true);
      expect(Object.keys(d).slice(0, 11)).toEqual(['kind', 'status', 'environment', 'entity_type', 'entity_id', 'subject', 'external_reference_id', 'sepa_reference', 'expected', 'observed', 'details']);
      expect(d.environment).toBe('sandbox');
    }
  });
});
