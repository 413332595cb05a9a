import { abortableDelay } from './backoff.js';

/**
 * The process's one request budget (RATE_LIMIT_RPS, shared by every request).
 *
 * Scheduling is GCRA-style: each request reserves the next free slot, slots 1/rate apart, with no
 * burst allowance. A classic bucket with capacity B lets B requests out at once after an idle spell;
 * against a provider that counts "500 in any second" that burst plus the steady stream overflows the
 * window, so the poller would earn 429s at exactly the configured rate. Idle time is never banked.
 *
 * The rate adapts like TCP congestion control: a 429 cuts it multiplicatively (another process of
 * the merchant's may be spending the same per-IP budget), and it climbs back linearly while no 429
 * arrives. Only a 429 for a request sent after the last cut counts, so one burst of rejections that
 * were all in flight together is one signal, not eight (which would collapse the rate to nothing).
 *
 * Even spacing alone is not enough at exactly the provider's rate. The provider counts requests
 * when they reach it, and counts "more than N in any second": if request k reaches it late (our
 * event loop or its was busy, a timer fired late) and request k+N on time, the two are less than a
 * second apart and k+N earns a 429, whose Retry-After (1 s) stalls every page behind it. So each
 * request also passes a window check on what the provider can have seen: the provider counted
 * request k somewhere between its send and its answer, so once k's answer is in, k cannot share a
 * window with anything sent a full window later. A request goes out only while fewer than N
 * requests are in flight or were answered within the last window. This holds whatever the delays,
 * and costs one round trip per window (about 1 % at 10 ms). `answered` must follow every `acquire`.
 *
 * A 429's Retry-After is the provider's word on when this client (its budget is per client, not per
 * request) may come back: no request goes out before it, not only the rejected one's retry. A
 * request already waiting for its slot when such an answer arrives queues again behind the pause,
 * so the requests resume evenly spaced instead of together.
 */

export interface RateLimiterOptions {
  ratePerSecond: number;
  /** Multiplier applied on a 429. */
  decrease?: number;
  /** Lowest rate as a fraction of the ceiling. */
  floorFraction?: number;
  /** Recovery speed: fraction of the ceiling regained per second without a 429. */
  recoveryPerSecond?: number;
  /** The provider's counting window; at most ratePerSecond * windowMs / 1000 requests in any one. */
  windowMs?: number;
  now?: () => number;
}

export class RateLimiter {
  readonly ceiling: number;
  private readonly decrease: number;
  private readonly floor: number;
  private readonly recoveryPerMs: number;
  private readonly now: () => number;
  private nextSlotMs = 0;
  private rateAtCut: number;
  private lastCutMs = Number.NEGATIVE_INFINITY;
  /** No request goes out before this (a 429's Retry-After). */
  private pausedUntilMs = Number.NEGATIVE_INFINITY;
  private readonly windowMs: number;
  private readonly windowLimit: number;
  private inFlight = 0;
  /** When recent answers arrived, oldest first, from `answeredHead` on. */
  private answeredAt: number[] = [];
  private answeredHead = 0;
  throttleSignals = 0;

  constructor(options: RateLimiterOptions) {
    if (!(options.ratePerSecond > 0)) throw new RangeError('ratePerSecond must be positive');
    this.ceiling = options.ratePerSecond;
    this.decrease = options.decrease ?? 0.7;
    this.floor = this.ceiling * (options.floorFraction ?? 0.05);
    this.recoveryPerMs = (this.ceiling * (options.recoveryPerSecond ?? 0.1)) / 1000;
    this.now = options.now ?? (() => performance.now());
    this.rateAtCut = this.ceiling;
    this.windowMs = options.windowMs ?? 1000;
    this.windowLimit = Math.max(1, Math.floor((this.ceiling * this.windowMs) / 1000));
  }

  /** Requests per second allowed right now. */
  currentRate(nowMs: number = this.now()): number {
    if (this.lastCutMs === Number.NEGATIVE_INFINITY) return this.ceiling;
    return Math.min(this.ceiling, this.rateAtCut + this.recoveryPerMs * (nowMs - this.lastCutMs));
  }

  /** Reserves the next slot; returns how long to wait for it (ms). Pure bookkeeping, no timers. */
  reserve(): { delayMs: number; slotMs: number } {
    const now = this.now();
    const slot = Math.max(now, this.nextSlotMs, this.pausedUntilMs);
    this.nextSlotMs = slot + 1000 / this.currentRate(slot);
    return { delayMs: slot - now, slotMs: slot };
  }

  /**
   * How long until one more request may go out without the provider possibly seeing more than the
   * window allows (0: now; Infinity: only an answer can make room). Pure bookkeeping, no timers.
   */
  windowWaitMs(now: number = this.now()): number {
    while (this.answeredHead < this.answeredAt.length && this.answeredAt[this.answeredHead]! + this.windowMs <= now) this.answeredHead += 1;
    if (this.answeredHead > 1024) {
      this.answeredAt = this.answeredAt.slice(this.answeredHead);
      this.answeredHead = 0;
    }
    const recent = this.answeredAt.length - this.answeredHead;
    // How many recent answers must age out of the window before one more request fits.
    const excess = this.inFlight + recent + 1 - this.windowLimit;
    if (excess <= 0) return 0;
    if (excess > recent) return Number.POSITIVE_INFINITY;
    return this.answeredAt[this.answeredHead + excess - 1]! + this.windowMs - now;
  }

  /** Waits for a slot and room in the window; resolves with the send time to hand back to `onThrottled`. */
  async acquire(signal?: AbortSignal): Promise<number> {
    signal?.throwIfAborted();
    let { delayMs, slotMs } = this.reserve();
    if (delayMs >= 1) await abortableDelay(delayMs, signal);
    // A Retry-After that arrived while this request waited for its slot: it queues behind the pause.
    while (this.now() < this.pausedUntilMs) {
      ({ delayMs, slotMs } = this.reserve());
      if (delayMs >= 1) await abortableDelay(delayMs, signal);
    }
    for (let wait = this.windowWaitMs(); wait > 0; wait = this.windowWaitMs()) {
      // Every request of the window in flight at once is rare (the window holds hundreds); a short
      // nap then is simpler than a queue of waiters for answers.
      await abortableDelay(Number.isFinite(wait) ? Math.ceil(wait) : 5, signal);
    }
    this.sent();
    return Math.max(slotMs, this.now());
  }

  /** A request goes out now (acquire does this; exposed for tests of the bookkeeping). */
  sent(): void {
    this.inFlight += 1;
  }

  /** The request of an `acquire` was answered (or failed, or never left): from now on it is history. */
  answered(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.answeredAt.push(this.now());
  }

  /**
   * A request sent at `sentAtMs` was answered 429, asking to wait `retryAfterMs` (its Retry-After,
   * if any; the caller bounds it): nothing goes out before then. Returns true when this cut the rate.
   */
  onThrottled(sentAtMs: number, retryAfterMs?: number): boolean {
    const now = this.now();
    if (retryAfterMs !== undefined && retryAfterMs > 0) this.pausedUntilMs = Math.max(this.pausedUntilMs, now + retryAfterMs);
    if (sentAtMs < this.lastCutMs) return false;
    this.rateAtCut = Math.max(this.floor, this.currentRate(now) * this.decrease);
    this.lastCutMs = now;
    this.throttleSignals += 1;
    // Slots already promised at the old pace are stretched too, so the cut takes effect at once.
    this.nextSlotMs = Math.max(this.nextSlotMs, now + 1000 / this.rateAtCut);
    return true;
  }
}
