import { TimedHeap, type Timed } from './heap.js';
import type { BankLine, EmittedEvent, FaultRecord, InvoiceFault, InvoiceRecord, OrderRecord, PayoutFault, PayoutRecord, PendingDeduction } from './model.js';
import type { BusinessOptions, Env } from './options.js';
import type { BuyerRecord } from './payloads.js';
import type { ContractTerms } from './contract.js';
import { germanIban } from './parties.js';
import { Prng } from './prng.js';
import { formatEventTime } from './time.js';

/** What the business asks of the fault layer and tells it: decisions come from the fault stream. */
export interface BusinessHooks {
  emit(event: EmittedEvent): void;
  orderFault(): 'none' | 'silent' | 'ghost';
  payoutFault(): PayoutFault;
  creditWithoutPayout(): boolean;
  invoiceFault(stage: 'approved' | 'canceled'): InvoiceFault;
  /** the fault layer's stream for the details of invoice and report faults */
  readonly invoiceFaultDetails: Prng;
  record(record: FaultRecord): void;
}

interface Action extends Timed {
  run: () => void;
}

/**
 * One environment's merchant business as a discrete-event simulation: every entity schedules its
 * next change when it makes the current one, and actions run strictly in (time, sequence) order,
 * so the result depends only on the seed and options, never on how time was advanced.
 */
export class Business {
  readonly rng: Prng;
  /** draws of the invoice-to-cash business (split shipments, payment methods, disputes) */
  readonly termsRng: Prng;
  /** The API's listing in creation order (the API shows it reversed: newest first). */
  readonly orders: OrderRecord[] = [];
  readonly ordersByUuid = new Map<string, OrderRecord>();
  readonly ghostOrders: OrderRecord[] = [];
  readonly acceptedBuyers: BuyerRecord[] = [];
  readonly invoices: InvoiceRecord[] = [];
  readonly payouts: PayoutRecord[] = [];
  readonly bankLines: BankLine[] = [];
  /** credit notes, buyers' direct payments and lost disputes not yet deducted from a payout */
  readonly pendingDeductions: PendingDeduction[] = [];
  /** every buyer payment the provider learnt of (deducted or not), for the ground truth */
  readonly buyerPayments: PendingDeduction[] = [];
  readonly merchantIban: string;
  readonly providerIban: string;
  readonly merchantName = 'Muster Versand GmbH';
  readonly providerName = 'BNPL Provider GmbH';
  private readonly counters = new Map<string, number>();
  private readonly queue = new TimedHeap<Action>();
  private actionSeq = 0;
  private eventSeq = 0;
  private started = false;

  constructor(
    readonly env: Env,
    seed: string,
    readonly options: BusinessOptions,
    readonly terms: ContractTerms,
    readonly start: number,
    readonly hooks: BusinessHooks,
  ) {
    this.rng = new Prng(`${seed}/${env}/business`);
    this.termsRng = new Prng(`${seed}/${env}/business/invoice-to-cash`);
    this.merchantIban = germanIban(this.rng);
    this.providerIban = germanIban(this.rng);
  }

  /**
   * Schedules the first actions of each part (business-start.ts passes them in, so this file
   * imports none of the parts that import it); nothing runs until runUntil.
   */
  begin(parts: readonly ((b: Business) => void)[]): void {
    if (this.started) return;
    this.started = true;
    for (const start of parts) start(this);
  }

  schedule(at: number, run: () => void): void {
    this.queue.push({ at, seq: this.actionSeq++, run });
  }

  nextActionAt(): number | undefined {
    return this.queue.peek()?.at;
  }

  /** Runs every action due at or before `limit`, in order; returns how many ran. */
  runUntil(limit: number): number {
    let ran = 0;
    for (let next = this.queue.peek(); next !== undefined && next.at <= limit; next = this.queue.peek()) {
      this.queue.pop();
      next.run();
      ran += 1;
    }
    return ran;
  }

  nextNumber(counter: string): number {
    const n = (this.counters.get(counter) ?? 0) + 1;
    this.counters.set(counter, n);
    return n;
  }

  reference(prefix: string, counter: string): string {
    return `${prefix}-${String(this.nextNumber(counter)).padStart(6, '0')}`;
  }

  eventTime(at: number): string {
    return formatEventTime(at, this.rng.digits(6));
  }

  emit(event: Omit<EmittedEvent, 'env' | 'seq'>): void {
    this.hooks.emit({ ...event, env: this.env, seq: this.eventSeq++ });
  }

  setOrderState(order: OrderRecord, state: string, at: number): void {
    order.state = state;
    order.history.push({ state, at });
  }
}
