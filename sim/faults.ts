import type { BusinessHooks } from './business.js';
import type { EmittedEvent, FaultRecord, InvoiceFault, PayoutFault } from './model.js';
import type { Env, FaultRates } from './options.js';
import { Prng } from './prng.js';
import { eventKey, sign } from './signing.js';
import { formatEventTime, MINUTE_MS, SECOND_MS } from './time.js';

export type DeliveryVariant = 'original' | 'repeat' | 'second_event' | 'wrong_secret' | 'reordered' | 'delayed' | 'ghost';

/** One body to deliver at a simulated time, to every address subscribed to its topic then. */
export interface PlannedDelivery {
  seq: number;
  env: Env;
  dueAt: number;
  topic: string;
  entityType: string;
  entityId: string;
  eventKey: string;
  body: Buffer;
  signature: string;
  signedWith: Env;
  variant: DeliveryVariant;
}

export interface PlannerSettings {
  rates: FaultRates;
  latencyMs: [number, number];
  graceMs: number;
  secrets: Record<Env, string>;
}

const OTHER: Record<Env, Env> = { sandbox: 'production', production: 'sandbox' };
const REPEATABLE = new Set(['order', 'invoice', 'payout']);

/**
 * Decides, from its own seeded stream, how each business event is delivered: normally, or with one
 * fault. At most one event fault per event, so each expected discrepancy has a single cause.
 */
export class FaultPlanner implements BusinessHooks {
  readonly records: FaultRecord[] = [];
  private readonly rng: Prng;
  private readonly invoiceRng: Prng;
  private readonly invoiceDetailRng: Prng;

  constructor(
    readonly env: Env,
    seed: string,
    private readonly settings: PlannerSettings,
    private readonly plan: (delivery: Omit<PlannedDelivery, 'seq'>) => void,
  ) {
    this.rng = new Prng(`${seed}/${env}/faults`);
    this.invoiceRng = new Prng(`${seed}/${env}/faults/invoices`);
    this.invoiceDetailRng = new Prng(`${seed}/${env}/faults/invoice-details`);
  }

  record(record: FaultRecord): void {
    this.records.push(record);
  }

  orderFault(): 'none' | 'silent' | 'ghost' {
    const { silentOrder, ghostOrder } = this.settings.rates;
    const roll = this.rng.next();
    if (roll < silentOrder) return 'silent';
    if (roll < silentOrder + ghostOrder) return 'ghost';
    return 'none';
  }

  payoutFault(): PayoutFault {
    const r = this.settings.rates;
    let roll = this.rng.next();
    const table: [PayoutFault, number][] = [
      ['payout_amount_mismatch', r.payoutAmountMismatch],
      ['payout_no_credit', r.payoutNoCredit],
      ['payout_unknown_invoice', r.payoutUnknownInvoice],
      ['payout_duplicate_sepa', r.payoutDuplicateSepa],
      ['payout_cancelled_credited', r.payoutCancelledCredited],
      ['payout_report_mismatch', r.payoutReportMismatch],
    ];
    for (const [fault, rate] of table) {
      if (roll < rate) return fault;
      roll -= rate;
    }
    return 'none';
  }

  /**
   * One roll per invoice once its fate is known (factoring approved, or the invoice canceled),
   * against the cumulative invoice-fault table: a fault that does not apply to that stage leaves
   * the invoice alone. Drawn from a stream of its own, so the rates of these faults leave every
   * other fault's draws as they were.
   */
  invoiceFault(stage: 'approved' | 'canceled'): InvoiceFault {
    const r = this.settings.rates;
    let roll = this.invoiceRng.next();
    const table: [InvoiceFault, number, boolean][] = [
      ['invoice_not_paid_out', r.invoiceNotPaidOut, stage === 'approved'],
      ['invoice_paid_out_twice', r.invoicePaidOutTwice, stage === 'approved'],
      ['fee_overcharged', r.feeOvercharged, stage === 'approved'],
      ['fixed_fee_twice', r.fixedFeeTwice, stage === 'approved'],
      ['canceled_invoice_paid', r.canceledInvoicePaid, stage === 'canceled'],
      ['buyer_paid_directly', r.buyerPaidDirectly, stage === 'approved'],
    ];
    for (const [fault, rate, applies] of table) {
      if (roll < rate) return applies ? fault : 'none';
      roll -= rate;
    }
    return 'none';
  }

  /** Draws for the details of invoice faults and report faults (when, how much, which row). */
  get invoiceFaultDetails(): Prng {
    return this.invoiceDetailRng;
  }

  creditWithoutPayout(): boolean {
    return this.rng.chance(this.settings.rates.creditWithoutPayout);
  }

  emit(event: EmittedEvent): void {
    if (event.order?.silent) return;
    const body = Buffer.from(JSON.stringify(event.payload), 'utf8');
    const key = eventKey(event.topic, event.entityId, event.eventTime, body);
    const [minLatency, maxLatency] = this.settings.latencyMs;
    const dueAt = event.at + this.rng.int(minLatency, maxLatency);
    const send = (variant: DeliveryVariant, at: number, bytes = body, k = key, signedWith = this.env) =>
      this.plan({
        env: this.env,
        dueAt: at,
        topic: event.topic,
        entityType: event.entityType,
        entityId: event.entityId,
        eventKey: k,
        body: bytes,
        signature: sign(bytes, this.settings.secrets[signedWith]),
        signedWith,
        variant,
      });

    if (event.order?.ghost) return send('ghost', dueAt);
    const fault = this.pickEventFault(event);
    switch (fault) {
      case 'never_delivered':
        this.record({ fault, event });
        return;
      case 'delayed_past_grace': {
        const at = event.at + this.settings.graceMs + this.rng.int(MINUTE_MS, 30 * MINUTE_MS);
        this.record({ fault, event, deliveredAt: at });
        return send('delayed', at);
      }
      case 'reordered': {
        // After the next event's latest possible delivery, so the receiver sees them swapped.
        const at = (event.nextTransitionAt ?? event.at) + maxLatency + this.rng.int(SECOND_MS, MINUTE_MS);
        this.record({ fault, event });
        return send('reordered', at);
      }
      case 'second_event': {
        send('original', dueAt);
        const room = event.nextTransitionAt === undefined ? 2 * MINUTE_MS : Math.floor((event.nextTransitionAt - event.at) / 2);
        const shift = this.rng.int(Math.min(SECOND_MS, room), Math.max(1, Math.min(2 * MINUTE_MS, room)));
        const secondEventTime = formatEventTime(event.at + shift, this.rng.digits(6));
        const bytes = Buffer.from(JSON.stringify({ ...event.payload, event_time: secondEventTime }), 'utf8');
        const secondKey = eventKey(event.topic, event.entityId, secondEventTime, bytes);
        this.record({ fault, event, secondEventTime, secondEventKey: secondKey });
        return send('second_event', event.at + shift + this.rng.int(minLatency, maxLatency), bytes, secondKey);
      }
      case 'wrong_secret': {
        send('original', dueAt);
        const signedWith = OTHER[this.env];
        this.record({ fault, event, eventKey: key, signedWith });
        return send('wrong_secret', dueAt + this.rng.int(0, 5 * SECOND_MS), body, key, signedWith);
      }
      case 'repeated': {
        send('original', dueAt);
        const copies = this.rng.int(1, 2);
        for (let i = 0; i < copies; i++) send('repeat', dueAt + this.rng.int(30 * SECOND_MS, 20 * MINUTE_MS));
        this.record({ fault, event, eventKey: key, copies });
        return;
      }
      default:
        return send('original', dueAt);
    }
  }

  /**
   * One roll per event against the cumulative order-fault table. A fault that does not apply to
   * the event (dropping a non-final state, reordering a final one) leaves it undisturbed: dropping
   * only final states keeps "missed webhook for the state the API shows" exact.
   */
  private pickEventFault(event: EmittedEvent): FaultRecord['fault'] | 'none' {
    const r = this.settings.rates;
    const roll = this.rng.next();
    if (event.entityType !== 'order') return REPEATABLE.has(event.entityType) && roll < r.repeated ? 'repeated' : 'none';
    const final = event.nextTransitionAt === undefined;
    const table: [FaultRecord['fault'], number, boolean][] = [
      ['never_delivered', r.neverDelivered, final],
      ['delayed_past_grace', r.delayedPastGrace, final],
      ['reordered', r.reordered, !final],
      ['second_event', r.secondEvent, true],
      ['wrong_secret', r.wrongSecret, true],
      ['repeated', r.repeated, true],
    ];
    let rest = roll;
    for (const [fault, rate, applies] of table) {
      if (rest < rate) return applies ? fault : 'none';
      rest -= rate;
    }
    return 'none';
  }
}
