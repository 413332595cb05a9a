import type { PageToWrite } from './upsert.js';

/**
 * Group commit for page writes. The pager hands over pages in page order; while a statement runs,
 * the pages that arrive meanwhile queue up, and the next statement takes them all (up to a size
 * cap). A database that keeps up writes small batches soon after each page arrives; one that falls
 * behind writes bigger batches, fewer round trips for the same orders, and so catches up instead of
 * capping the scan's pace. Memory stays bounded because the pager never has more than its
 * `writeConcurrency` pages waiting for a write.
 */

export interface BatcherOptions {
  /** Writes one batch; resolves with how many of its orders were new to the run. */
  write: (pages: readonly PageToWrite[]) => Promise<number>;
  /** Statements in flight at once. */
  maxStatements: number;
  /** Orders per statement, however many pages that is (a page larger than this goes alone). */
  maxOrders: number;
}

interface Queued {
  page: PageToWrite;
  resolve: (newInRun: number) => void;
  reject: (error: unknown) => void;
}

/**
 * How many pages from the front of `queue` go into the next statement: as many as fit in
 * `maxOrders` (at least one), stopping before a page that shares an order with one already taken,
 * so a statement sees each order once and a state change between two reads of it (paging drift)
 * is still recorded as two observations, in page order.
 */
export function batchLength<T>(queue: readonly T[], ordersOf: (item: T) => readonly { uuid: string }[], maxOrders: number): number {
  const seen = new Set<string>();
  let orders = 0;
  let taken = 0;
  for (const item of queue) {
    const pageOrders = ordersOf(item);
    if (taken > 0 && orders + pageOrders.length > maxOrders) break;
    const keys = pageOrders.map((o) => o.uuid.toLowerCase());
    if (taken > 0 && keys.some((k) => seen.has(k))) break;
    for (const k of keys) seen.add(k);
    orders += pageOrders.length;
    taken += 1;
  }
  return taken;
}

export class WriteBatcher {
  private readonly queue: Queued[] = [];
  private running = 0;

  constructor(private readonly options: BatcherOptions) {
    if (options.maxStatements < 1 || options.maxOrders < 1) throw new RangeError('maxStatements and maxOrders must be positive');
  }

  /**
   * Queues one page; resolves once it is in the ledger. A batch's count of new orders is credited
   * to its first page (0 to the others), so the sum over pages is right.
   */
  add(page: PageToWrite): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ page, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.running < this.options.maxStatements && this.queue.length > 0) {
      const n = batchLength(this.queue, (q) => q.page.orders, this.options.maxOrders);
      const batch = this.queue.splice(0, n);
      this.running += 1;
      this.options
        .write(batch.map((q) => q.page))
        .then(
          (newInRun) => batch.forEach((q, i) => q.resolve(i === 0 ? newInRun : 0)),
          (error: unknown) => batch.forEach((q) => q.reject(error)),
        )
        .finally(() => {
          this.running -= 1;
          this.drain();
        });
    }
  }
}
