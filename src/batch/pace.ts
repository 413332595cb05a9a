/**
 * The pace of bulk work beside the receiver (the daemon's reparse, the statement inbox's imports):
 * the share of wall time it spends on batches (its duty) follows the receiver's commit time,
 * additive increase and multiplicative decrease as in TCP's congestion control. Each batch adds WAL
 * that the receiver's next commit must wait to see flushed, and CPU on two shared cores; the
 * receiver's commit time measures both. Pure: the callers (reparse/run.ts,
 * statements/store-pipeline.ts) do the waiting.
 */
export interface PaceSettings {
  /** The duty while the receiver's commits stay fast (or it is idle). */
  maxDuty: number;
  /** The duty it never goes below, so the work always finishes. */
  minDuty: number;
  /** Receiver commit time (ms) above which the work halves its duty and waits for it to fall. */
  yieldAboveMs: number;
  /** Duty regained after each batch during which the receiver's commits stayed under half of yieldAboveMs. */
  step: number;
}

export class YieldingPace {
  private current: number;

  constructor(readonly settings: PaceSettings) {
    this.current = settings.maxDuty;
  }

  get duty(): number {
    return this.current;
  }

  /** Whether the receiver is under pressure now: no batch should start. */
  mustYield(pressureMs: number): boolean {
    return pressureMs > this.settings.yieldAboveMs;
  }

  /** The pause after `busyMs` of work at the present duty, which it leaves as it is. */
  restFor(busyMs: number): number {
    return (busyMs * (1 - this.current)) / this.current;
  }

  /** After a batch that took `batchMs`, with the receiver's commit pressure now: the pause before the next, in ms. */
  pauseAfter(batchMs: number, pressureMs: number): number {
    const { maxDuty, minDuty, yieldAboveMs, step } = this.settings;
    if (pressureMs > yieldAboveMs) this.current = Math.max(minDuty, this.current / 2);
    else if (pressureMs <= yieldAboveMs / 2) this.current = Math.min(maxDuty, this.current + step);
    return (batchMs * (1 - this.current)) / this.current;
  }
}
