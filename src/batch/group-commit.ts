/**
 * Group commit, for every batched write to the ledger (the receiver's deliveries, the poller's
 * pages). An item added while a slot is free is written at once, alone; items added while every
 * slot is busy queue up, and the next free slot writes them all in one batch (up to what `take`
 * allows). No timer delays a write: at low load latency is one statement, under load throughput is
 * that of batched ones, and a database that falls behind gets bigger batches (fewer round trips for
 * the same rows) instead of a longer queue of small ones. Each caller's promise settles with its own
 * item's result once the batch that held it was written, or with the batch's failure.
 *
 * What a failure means (retry, split, give up) is the caller's policy, written beside its
 * statement in `write`: this module only queues, slots and settles.
 */
export interface GroupCommitOptions<T, R> {
  /**
   * Writes one batch. Resolves with one result per item, in order; rejecting fails every item of
   * the batch with that error.
   */
  write: (items: readonly T[]) => Promise<readonly R[]>;
  /** Batches being written at once. */
  slots: number;
  /**
   * How many items from the front of `queue` go into the next batch; at least one is always taken.
   * Default: all of them.
   */
  take?: (queue: readonly T[]) => number;
}

/**
 * The caller's time for an item ran out before it settled (`add`'s `abandonAfterMs`). `sent` says
 * its batch was already being written: it may still be written. Otherwise it was taken out of the
 * queue and is never written.
 */
export class AbandonedError extends Error {
  override readonly name = 'AbandonedError';
  constructor(readonly sent: boolean) {
    super(sent ? 'abandoned while its batch was being written' : 'abandoned before its batch was sent');
  }
}

interface Entry<R> {
  /** performance.now() when it was added, for oldestPendingMs. */
  addedAt: number;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
  /** The `abandonAfterMs` timer, cleared when the entry settles. */
  timer: NodeJS.Timeout | undefined;
}

/** Stops the entry's timer, and hands the entry back to be resolved or rejected. */
function settle<R>(entry: Entry<R>): Entry<R> {
  if (entry.timer !== undefined) clearTimeout(entry.timer);
  return entry;
}

export class GroupCommit<T, R> {
  // Two parallel arrays, so `take` sees the items themselves without a copy per batch.
  private readonly items: T[] = [];
  private readonly entries: Entry<R>[] = [];
  private busy = 0;
  /** The oldest addedAt of each batch being written. */
  private readonly sentAt = new Set<{ since: number }>();
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: GroupCommitOptions<T, R>) {
    if (!(options.slots >= 1)) throw new RangeError('slots must be at least 1');
  }

  /**
   * Queues one item; settles with its result once its batch was written. With `abandonAfterMs`,
   * rejects with AbandonedError when that many milliseconds pass first.
   */
  add(item: T, abandonAfterMs?: number): Promise<R> {
    // The timer lives in the entry and its callback holds only the entry. Written as closures
    // around resolve and reject that each cleared the timer, the receiver's per-delivery objects
    // were promoted out of V8's young generation (5.3 against 3.0 kB per delivery, sampled) and
    // its scavenges took 1.5x as long (410-530 against 260-300 ms per 42,000 deliveries), ~7% of
    // ingest throughput; with --no-allocation-site-pretenuring both forms ran alike. bench/README.md,
    // "Against a revision", has the figures and the command.
    return new Promise<R>((resolve, reject) => {
      const entry: Entry<R> = { addedAt: performance.now(), resolve, reject, timer: undefined };
      if (abandonAfterMs !== undefined) entry.timer = setTimeout(() => this.abandon(entry), Math.max(0, abandonAfterMs));
      this.items.push(item);
      this.entries.push(entry);
      this.pump();
    });
  }

  /** The entry's time ran out: out of the queue if it is still there, and rejected. */
  private abandon(entry: Entry<R>): void {
    const at = this.entries.indexOf(entry);
    if (at >= 0) {
      this.entries.splice(at, 1);
      this.items.splice(at, 1);
    }
    entry.reject(new AbandonedError(at < 0));
    this.wakeIfIdle();
  }

  /** Resolves when nothing is queued or being written (a drain on shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Milliseconds the oldest item not yet settled (queued or being written) has waited; 0 when none. */
  oldestPendingMs(): number {
    const now = performance.now();
    let oldest = now;
    for (const batch of this.sentAt) oldest = Math.min(oldest, batch.since);
    for (const entry of this.entries) oldest = Math.min(oldest, entry.addedAt);
    return now - oldest;
  }

  private isIdle(): boolean {
    return this.entries.length === 0 && this.busy === 0;
  }

  private wakeIfIdle(): void {
    if (this.isIdle()) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private pump(): void {
    while (this.entries.length > 0 && this.busy < this.options.slots) {
      const n = Math.max(1, Math.min(this.entries.length, this.options.take?.(this.items) ?? this.entries.length));
      const items = this.items.splice(0, n);
      const entries = this.entries.splice(0, n);
      const sent = { since: entries.reduce((min, e) => Math.min(min, e.addedAt), Infinity) };
      this.busy += 1;
      this.sentAt.add(sent);
      let written: Promise<readonly R[]>;
      try {
        written = this.options.write(items);
      } catch (error) {
        written = Promise.reject(error);
      }
      written
        .then(
          (results) => {
            if (results.length !== entries.length) throw new Error(`a batch of ${entries.length} items was written with ${results.length} results`);
            entries.forEach((entry, i) => settle(entry).resolve(results[i] as R));
          },
        )
        .catch((error: unknown) => entries.forEach((entry) => settle(entry).reject(error)))
        .finally(() => {
          this.busy -= 1;
          this.sentAt.delete(sent);
          this.pump();
          this.wakeIfIdle();
        });
    }
  }
}
