import { abortableDelay } from './backoff.js';

/**
 * The process's one request budget (issue 3: RATE_LIMIT_RPS shared by every request).
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
 */

export interface RateLimiterOptions {
  ratePerSecond: number;
  /** Multiplier applied on a 429. */
  decrease?: number;
  /** Lowest rate as a fraction of the ceiling. */
  floorFraction?: number;
  /** Recovery speed: fraction of the ceiling regained per second without a 429. */
  recoveryPerSecond?: number;
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
  throttleSignals = 0;

  constructor(options: RateLimiterOptions) {
    if (!(options.ratePerSecond > 0)) throw new RangeError('ratePerSecond must be positive');
    this.ceiling = options.ratePerSecond;
    this.decrease = options.decrease ?? 0.7;
    this.floor = this.ceiling * (options.floorFraction ?? 0.05);
    this.recoveryPerMs = (this.ceiling * (options.recoveryPerSecond ?? 0.1)) / 1000;
    this.now = options.now ?? (() => performance.now());
    this.rateAtCut = this.ceiling;
  }

  /** Requests per second allowed right now. */
  currentRate(nowMs: number = this.now()): number {
    if (this.lastCutMs === Number.NEGATIVE_INFINITY) return this.ceiling;
    return Math.min(this.ceiling, this.rateAtCut + this.recoveryPerMs * (nowMs - this.lastCutMs));
  }

  /** Reserves the next slot; returns how long to wait for it (ms). Pure bookkeeping, no timers. */
  reserve(): { delayMs: number; slotMs: number } {
    const now = this.now();
    const slot = Math.max(now, this.nextSlotMs);
    this.nextSlotMs = slot + 1000 / this.currentRate(slot);
    return { delayMs: slot - now, slotMs: slot };
  }

  /** Waits for a slot; resolves with the send time to hand back to `onThrottled`. */
  async acquire(signal?: AbortSignal): Promise<number> {
    signal?.throwIfAborted();
    const { delayMs, slotMs } = this.reserve();
    if (delayMs >= 1) await abortableDelay(delayMs, signal);
    return slotMs;
  }

  /** A request sent at `sentAtMs` was answered 429. Returns true when this cut the rate. */
  onThrottled(sentAtMs: number): boolean {
    if (sentAtMs < this.lastCutMs) return false;
    const now = this.now();
    this.rateAtCut = Math.max(this.floor, this.currentRate(now) * this.decrease);
    this.lastCutMs = now;
    this.throttleSignals += 1;
    // Slots already promised at the old pace are stretched too, so the cut takes effect at once.
    this.nextSlotMs = Math.max(this.nextSlotMs, now + 1000 / this.rateAtCut);
    return true;
  }
}
