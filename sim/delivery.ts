import { Agent, request } from 'undici';
import type { Logger } from '../src/log/logger.js';
import type { PlannedDelivery } from './faults.js';
import { TimedHeap, type Timed } from './heap.js';
import type { Env } from './options.js';
import type { Registration } from './registrations.js';
import { addressesFor } from './registrations.js';
import type { SimClock } from './time.js';
import type { UncertainDelivery } from './ground-truth.js';

export interface DeliverySettings {
  signatureHeader: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
  retryFactor: number;
  concurrency: number;
}

export interface AttemptRecord {
  env: Env;
  seq: number;
  topic: string;
  variant: string;
  eventKey: string;
  address: string;
  attempt: number;
  /** simulated ms when the attempt was sent */
  simAt: number;
  status: number | null;
  error: string | null;
}

export interface DeliveryStats {
  planned: number;
  unrouted: number;
  attempted: number;
  succeeded: number;
  failed: number;
  gaveUp: number;
  pending: number;
  inFlight: number;
}

type Work = Timed & ({ kind: 'plan'; delivery: PlannedDelivery } | { kind: 'attempt'; delivery: PlannedDelivery; address: string; attempt: number });

const ATTEMPT_LOG_LIMIT = 100_000;

/**
 * Sends planned deliveries when the simulated clock reaches them, to the addresses subscribed at
 * that moment, and retries non-2xx answers and timeouts with exponential backoff in simulated time.
 * A bounded number of requests is in flight so a fast-forwarded week does not open thousands of
 * sockets at once.
 */
export class Dispatcher {
  readonly attempts: AttemptRecord[] = [];
  readonly uncertain: UncertainDelivery[] = [];
  private readonly queue = new TimedHeap<Work>();
  private readonly agent: Agent;
  private readonly controller = new AbortController();
  private seq = 0;
  private inFlight = 0;
  private readonly counts = { planned: 0, unrouted: 0, attempted: 0, succeeded: 0, failed: 0, gaveUp: 0 };

  constructor(
    private readonly clock: SimClock,
    private readonly settings: DeliverySettings,
    private readonly registrations: (env: Env) => readonly Registration[],
    private readonly onSettled: () => void,
    private readonly log: Logger,
  ) {
    this.agent = new Agent({ connections: settings.concurrency, keepAliveTimeout: 4000 });
  }

  add(delivery: PlannedDelivery): void {
    this.counts.planned += 1;
    this.queue.push({ at: delivery.dueAt, seq: this.seq++, kind: 'plan', delivery });
  }

  nextDueAt(): number | undefined {
    return this.queue.peek()?.at;
  }

  get idle(): boolean {
    return this.queue.size === 0 && this.inFlight === 0;
  }

  get busy(): boolean {
    return this.inFlight >= this.settings.concurrency;
  }

  get hasInFlight(): boolean {
    return this.inFlight > 0;
  }

  stats(): DeliveryStats {
    return { ...this.counts, pending: this.queue.size, inFlight: this.inFlight };
  }

  /** Starts everything due at `now` that the concurrency bound allows. */
  runDue(now: number): void {
    for (let work = this.queue.peek(); work !== undefined && work.at <= now; work = this.queue.peek()) {
      if (work.kind === 'attempt' && this.busy) return;
      this.queue.pop();
      if (work.kind === 'plan') {
        const addresses = addressesFor(this.registrations(work.delivery.env), work.delivery.topic);
        if (addresses.length === 0) this.counts.unrouted += 1;
        for (const address of addresses) this.queue.push({ at: work.at, seq: this.seq++, kind: 'attempt', delivery: work.delivery, address, attempt: 1 });
      } else {
        void this.send(work.delivery, work.address, work.attempt);
      }
    }
  }

  private async send(d: PlannedDelivery, address: string, attempt: number): Promise<void> {
    this.inFlight += 1;
    this.counts.attempted += 1;
    const record: AttemptRecord = {
      env: d.env,
      seq: d.seq,
      topic: d.topic,
      variant: d.variant,
      eventKey: d.eventKey,
      address,
      attempt,
      simAt: this.clock.now(),
      status: null,
      error: null,
    };
    try {
      const res = await request(address, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', 'user-agent': 'bnpl-recon-sim/1', [this.settings.signatureHeader]: d.signature },
        body: d.body,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
        signal: AbortSignal.any([this.controller.signal, AbortSignal.timeout(this.settings.timeoutMs)]),
      });
      record.status = res.statusCode;
      await res.body.dump();
    } catch (error) {
      // Not every error's code is a string (some carry a number), so it is checked before use.
      const code: unknown = (error as { code?: unknown }).code;
      record.error = (error as Error).name === 'TimeoutError' || (typeof code === 'string' && code.includes('TIMEOUT')) ? 'timeout' : (error as Error).message;
    } finally {
      this.inFlight -= 1;
    }
    this.settle(d, address, attempt, record);
  }

  private settle(d: PlannedDelivery, address: string, attempt: number, record: AttemptRecord): void {
    if (this.attempts.length >= ATTEMPT_LOG_LIMIT) this.attempts.shift();
    this.attempts.push(record);
    if (this.controller.signal.aborted) return;
    const ok = record.status !== null && record.status >= 200 && record.status < 300;
    if (ok) {
      this.counts.succeeded += 1;
    } else {
      this.counts.failed += 1;
      // A timed-out attempt may have been committed by the receiver before we gave up, and so may
      // one answered 5xx: a receiver that answers at an acknowledgement deadline (bnpl-recon's 503,
      // webhooks/receiver.ts) cannot know whether the commit still in flight lands. A retry could
      // then be a duplicate delivery the ground truth did not plan. Recorded, not hidden.
      if (record.error === 'timeout' || (record.status !== null && record.status >= 500)) {
        const details = record.error === 'timeout' ? `attempt ${attempt} timed out` : `attempt ${attempt} answered ${record.status}`;
        this.uncertain.push({ environment: d.env, topic: d.topic, entity_id: d.entityId, event_key: d.eventKey, address, details });
      }
      if (attempt <= this.settings.maxRetries) {
        const delay = this.settings.retryBaseMs * this.settings.retryFactor ** (attempt - 1);
        this.queue.push({ at: this.clock.now() + delay, seq: this.seq++, kind: 'attempt', delivery: d, address, attempt: attempt + 1 });
      } else {
        this.counts.gaveUp += 1;
        this.log.debug({ topic: d.topic, address, attempts: attempt }, 'delivery given up');
      }
    }
    this.onSettled();
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.agent.close().catch(() => undefined);
  }
}
