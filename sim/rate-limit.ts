/**
 * The spec's limit: at most `limit` requests per second per client address, counted separately per
 * environment. A sliding window (the times of the last `limit` accepted requests in a ring) says
 * exactly "more than `limit` in any one second", which a fixed per-second bucket would let double
 * across a bucket edge.
 */
export class SlidingWindowLimiter {
  private readonly windows = new Map<string, { times: Float64Array; next: number; count: number }>();

  constructor(
    readonly limit: number,
    private readonly now: () => number = () => performance.now(),
    private readonly windowMs = 1000,
  ) {}

  /** 0 if the request may proceed (and counts it), else the milliseconds until it could. */
  take(key: string): number {
    const t = this.now();
    let w = this.windows.get(key);
    if (!w) {
      w = { times: new Float64Array(this.limit), next: 0, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count === this.limit) {
      const oldest = w.times[w.next] ?? 0;
      if (t - oldest < this.windowMs) return Math.max(1, Math.ceil(oldest + this.windowMs - t));
    } else {
      w.count += 1;
    }
    w.times[w.next] = t;
    w.next = (w.next + 1) % this.limit;
    if (this.windows.size > 10_000) this.evictIdle(t);
    return 0;
  }

  private evictIdle(t: number): void {
    for (const [key, w] of this.windows) {
      const newest = w.times[(w.next + this.limit - 1) % this.limit] ?? 0;
      if (t - newest >= this.windowMs) this.windows.delete(key);
    }
  }
}
